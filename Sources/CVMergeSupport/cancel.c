#include "CVMergeSupport.h"

#include <signal.h>
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

int vm_interrupt_callback(void *opaque) {
    (void)opaque;
    return pending_signal != 0;
}

void vm_ignore_sigpipe(void) { signal(SIGPIPE, SIG_IGN); }

static volatile sig_atomic_t window_changes = 0;

static void count_window_change(int signal_number) {
    (void)signal_number;
    window_changes = window_changes + 1;
}

void vm_watch_window_size(void) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = count_window_change;
    action.sa_flags = SA_RESTART;
    sigemptyset(&action.sa_mask);
    sigaction(SIGWINCH, &action, NULL);
}

int vm_window_changes(void) { return window_changes; }
