#include "CVMergeSupport.h"

#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static volatile sig_atomic_t pending_signal = 0;

static void record_signal(int signal_number) { pending_signal = signal_number; }

void vm_install_cancel_handlers(void) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = record_signal;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, NULL);
    sigaction(SIGTERM, &action, NULL);
}

int vm_cancel_signal(void) { return pending_signal; }

// An atomic, because the thread that cancels (a worker's heartbeat) is not the one that reads it.
struct vm_cancel_token {
    atomic_int signal;
};

vm_cancel_token *vm_cancel_token_new(void) {
    vm_cancel_token *token = malloc(sizeof *token);
    if (token) atomic_init(&token->signal, 0);
    return token;
}

void vm_cancel_token_free(vm_cancel_token *token) { free(token); }

void vm_cancel_token_cancel(vm_cancel_token *token, int signal_number) {
    int expected = 0;
    // The first reason stays.
    atomic_compare_exchange_strong(&token->signal, &expected, signal_number);
}

int vm_cancel_token_signal(const vm_cancel_token *token) {
    if (pending_signal) return pending_signal;
    return token ? atomic_load(&((vm_cancel_token *)token)->signal) : 0;
}

int vm_interrupt_callback(void *opaque) { return vm_cancel_token_signal(opaque) != 0; }

void vm_ignore_sigpipe(void) { signal(SIGPIPE, SIG_IGN); }

