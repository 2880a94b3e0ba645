#ifndef VMERGE_SUPPORT_H
#define VMERGE_SUPPORT_H

/// Installs SIGINT/SIGTERM handlers that only record the signal, so the run can stop at the
/// next packet, remove its temporary output and exit with 128 + signal.
void vm_install_cancel_handlers(void);

/// The signal that asked the run to stop, or 0.
int vm_cancel_signal(void);

/// Records a cancellation request from code (tests, a future watch mode).
void vm_request_cancel(int signal_number);

/// An AVIOInterruptCB callback: non-zero once cancellation was requested, so blocking
/// FFmpeg I/O returns promptly.
int vm_interrupt_callback(void *opaque);

#endif
