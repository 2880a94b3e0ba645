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
