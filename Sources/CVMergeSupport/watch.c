#include "CVMergeSupport.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#ifdef __linux__
#include <sys/inotify.h>
#endif

int vm_watch_open(void) {
#ifdef __linux__
    return inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
#else
    return -1;
#endif
}

int vm_watch_add(int fd, const char *path) {
#ifdef __linux__
    // Never through a link, only folders.
    return inotify_add_watch(fd, path, IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE | IN_ATTRIB | IN_DELETE | IN_MOVED_FROM |
                                         IN_DELETE_SELF | IN_MOVE_SELF | IN_DONT_FOLLOW | IN_ONLYDIR);
#else
    (void)fd;
    (void)path;
    return -1;
#endif
}

void vm_watch_remove(int fd, int watch) {
#ifdef __linux__
    if (fd >= 0 && watch >= 0) inotify_rm_watch(fd, watch);
#else
    (void)fd;
    (void)watch;
#endif
}

int vm_watch_wait(int fd, int timeout_ms) {
    if (fd < 0) {
        // No inotify: just wait; a signal ends the wait early.
        return poll(0, 0, timeout_ms) < 0 ? -1 : 0;
    }
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int ready = poll(&p, 1, timeout_ms);
    if (ready <= 0) return ready < 0 ? -1 : 0;
    char buffer[8192];
    while (read(fd, buffer, sizeof buffer) > 0) {
    }
    return 1;
}
