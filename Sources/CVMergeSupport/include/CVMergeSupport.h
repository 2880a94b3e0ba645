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

/// Lets a write to a closed pipe (a report or progress reader that went away) fail with EPIPE
/// instead of killing the process before it can clean up.
void vm_ignore_sigpipe(void);

/// Receives one formatted FFmpeg log message and the object (AVClass-bearing) that logged it.
typedef void (*vm_log_handler)(void *object, int level, const char *message);

/// Routes FFmpeg's log at or above `level` to `handler` (FFmpeg's log callback takes a va_list,
/// which Swift cannot receive).
void vm_log_install(int level, vm_log_handler handler);

#endif
