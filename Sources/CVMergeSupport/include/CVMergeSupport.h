#ifndef VMERGE_SUPPORT_H
#define VMERGE_SUPPORT_H

#include <libavformat/avformat.h>

/// Installs SIGINT/SIGTERM handlers that only record the signal, so the run can stop at the
/// next packet, remove its temporary output and exit with 128 + signal.
void vm_install_cancel_handlers(void);

/// The signal that asked the run to stop, or 0.
int vm_cancel_signal(void);

/// One merge's own stop request, beside the process-wide one: a worker running several jobs
/// stops one of them (its lease was lost, it was cancelled) while the others go on.
typedef struct vm_cancel_token vm_cancel_token;
/// A token not cancelled yet; NULL when out of memory.
vm_cancel_token *vm_cancel_token_new(void);
void vm_cancel_token_free(vm_cancel_token *token);
/// Asks the merge holding `token` to stop, as `signal_number` would stop it (non-zero); safe from
/// any thread. The first request wins.
void vm_cancel_token_cancel(vm_cancel_token *token, int signal_number);
/// The signal that asked the process to stop, else the token's request (token may be NULL), else 0.
int vm_cancel_token_signal(const vm_cancel_token *token);

/// An AVIOInterruptCB callback (`opaque`: a vm_cancel_token, or NULL): non-zero once
/// cancellation was requested, so blocking FFmpeg I/O returns promptly.
int vm_interrupt_callback(void *opaque);

/// Lets a write to a closed pipe (a report or progress reader that went away) fail with EPIPE
/// instead of killing the process before it can clean up.
void vm_ignore_sigpipe(void);

/// Receives one formatted FFmpeg log message and the object (AVClass-bearing) that logged it.
typedef void (*vm_log_handler)(void *object, int level, const char *message);

/// Routes FFmpeg's log at or above `level` to `handler` (FFmpeg's log callback takes a va_list,
/// which Swift cannot receive).
void vm_log_install(int level, vm_log_handler handler);


/// Folder change notification (inotify on Linux): a descriptor, or -1 where unavailable.
int vm_watch_open(void);
/// Watches one folder (not through a link) for entries created, moved, written or deleted;
/// returns the watch, or -1.
int vm_watch_add(int fd, const char *path);
/// Stops watching (a job folder that left the inbox: its watch would follow it for ever).
void vm_watch_remove(int fd, int watch);
/// Waits up to `timeout_ms` for changes (fd -1: just waits). 1 changes, 0 timeout, -1 interrupted.
int vm_watch_wait(int fd, int timeout_ms);

/// An AVIOContext reading (and, if `writable`, writing) the open file `fd` by position; the
/// descriptor stays the caller's. NULL when out of memory.
AVIOContext *vm_fdio_alloc(int fd, int writable);
/// Flushes and frees a context from vm_fdio_alloc; returns its last I/O error (0 if none).
int vm_fdio_free(AVIOContext **context);
/// Gives a format context `pb` (from vm_fdio_alloc) and lets it open nothing by URL but its own
/// output again for reading (what faststart needs).
void vm_format_use_fdio(AVFormatContext *s, AVIOContext *pb);

/// Reads `size` bytes of a source at `offset` into `buffer`: the count read (0 at its end), or a
/// negative AVERROR. Called on the demuxer's thread.
typedef int (*vm_source_read)(void *owner, uint8_t *buffer, int size, int64_t offset);
/// An AVIOContext reading a source of `size` bytes that is not a file here (an object in a bucket,
/// an https resource) through `read`; seeking is by position within the size. Freed with
/// vm_fdio_free; `owner` stays the caller's. NULL when out of memory.
AVIOContext *vm_sourceio_alloc(void *owner, vm_source_read read, int64_t size);

/// Adds a chapter [start_us, end_us) titled `title` to an output before its header is written.
/// 0, or a negative AVERROR.
int vm_add_chapter(AVFormatContext *s, int64_t start_us, int64_t end_us, const char *title);
/// Drops the chapters that start at or after `end_us` and ends the last one there (an output
/// that --max-size ended early).
void vm_end_chapters_at(AVFormatContext *s, int64_t end_us);

#endif
