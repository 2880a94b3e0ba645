// renameat2 is declared only with _GNU_SOURCE (glibc 2.28+); older systems get the raw syscall.
#define _GNU_SOURCE
#include "CVMergePOSIX.h"
#include <pthread.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#ifdef __linux__
#include <sys/syscall.h>
#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif
#endif

int vm_rename_noreplace(int from_dir, const char *from, int to_dir, const char *to) {
#if defined(__linux__) && defined(SYS_renameat2)
    return (int)syscall(SYS_renameat2, from_dir, from, to_dir, to, RENAME_NOREPLACE);
#elif defined(__APPLE__)
    return renameatx_np(from_dir, from, to_dir, to, RENAME_EXCL);
#else
    (void)from_dir; (void)from; (void)to_dir; (void)to;
    errno = ENOSYS;
    return -1;
#endif
}

int vm_openat(int dir, const char *path, int flags, unsigned int mode) {
    return openat(dir, path, flags, (mode_t)mode);
}

int vm_try_lock(int fd) {
#if defined(F_OFD_SETLK)
    // Open-file-description locks: owned by this open file, not the process, so a second
    // open of the same lock file in this process conflicts too; released when the holder dies.
    struct flock lock;
    memset(&lock, 0, sizeof lock);
    lock.l_type = F_WRLCK;
    lock.l_whence = SEEK_SET;
    if (fcntl(fd, F_OFD_SETLK, &lock) == 0) return 0;
#else
    if (flock(fd, LOCK_EX | LOCK_NB) == 0) return 0;
#endif
    return (errno == EAGAIN || errno == EACCES || errno == EWOULDBLOCK) ? 1 : -1;
}


void vm_name_thread(const char *name) {
#if defined(__APPLE__)
    pthread_setname_np(name);
#else
    pthread_setname_np(pthread_self(), name);
#endif
}
