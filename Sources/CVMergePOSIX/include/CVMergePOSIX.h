#ifndef VMERGE_POSIX_H
#define VMERGE_POSIX_H

/// Renames `from` (relative to `from_dir`) to `to` (relative to `to_dir`) only if `to` does not
/// exist, in one step: renameat2(RENAME_NOREPLACE) on Linux, renameatx_np(RENAME_EXCL) on macOS.
/// Returns 0, or -1 with errno (EEXIST: the name is taken; ENOSYS/EINVAL/ENOTSUP: this system or
/// file system cannot do it, use link + unlink).
int vm_rename_noreplace(int from_dir, const char *from, int to_dir, const char *to);

/// openat(2) with a mode: Swift cannot call the variadic C function directly on every platform.
int vm_openat(int dir, const char *path, int flags, unsigned int mode);

#endif
