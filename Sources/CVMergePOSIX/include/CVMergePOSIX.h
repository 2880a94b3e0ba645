#ifndef VMERGE_POSIX_H
#define VMERGE_POSIX_H

/// Renames `from` (relative to `from_dir`) to `to` (relative to `to_dir`) only if `to` does not
/// exist, in one step: renameat2(RENAME_NOREPLACE) on Linux, renameatx_np(RENAME_EXCL) on macOS.
/// Returns 0, or -1 with errno (EEXIST: the name is taken; ENOSYS/EINVAL/ENOTSUP: this system or
/// file system cannot do it, use link + unlink).
int vm_rename_noreplace(int from_dir, const char *from, int to_dir, const char *to);

/// openat(2) with a mode: Swift cannot call the variadic C function directly on every platform.
int vm_openat(int dir, const char *path, int flags, unsigned int mode);

/// Tries to take an exclusive lock on an open file (opened for writing) without waiting: 0 taken,
/// 1 held by someone else, -1 error (e.g. a file system without locks). The lock goes when the
/// file is closed or the process dies (even by SIGKILL): claims and temporaries carry one, so a
/// live one is never mistaken for a leftover, on this machine or another sharing the folder.
int vm_try_lock(int fd);

/// Names the calling thread: pthread_setname_np, whose signature differs between Linux and macOS.
/// Linux refuses a name over 15 bytes (ERANGE) and leaves the old one. On Linux the threads it
/// starts afterwards take the name too.
void vm_name_thread(const char *name);

#endif
