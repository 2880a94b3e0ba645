// AVIO contexts on a file descriptor vmerge opened itself, so FFmpeg never opens a path: an input
// is read from the descriptor that was checked to be a regular file (and, in a watch job, reached
// without links); the output is written to the temporary file created with O_EXCL|O_NOFOLLOW.
// pread/pwrite with a position per context: the muxer's second, read-only context on the same
// file (faststart moves the index to the front) has its own position.
#include "CVMergeSupport.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct {
    int fd;
    int64_t position;
} vm_fdio;

static int fdio_read(void *opaque, uint8_t *buffer, int size) {
    vm_fdio *io = opaque;
    for (;;) {
        ssize_t count = pread(io->fd, buffer, (size_t)size, (off_t)io->position);
        if (count > 0) {
            io->position += count;
            return (int)count;
        }
        if (count == 0) return AVERROR_EOF;
        if (errno != EINTR) return AVERROR(errno);
        if (vm_cancel_signal()) return AVERROR_EXIT;
    }
}

// The buffer became const in libavformat 61 (FFmpeg 7.0).
#if LIBAVFORMAT_VERSION_MAJOR >= 61
static int fdio_write(void *opaque, const uint8_t *buffer, int size) {
#else
static int fdio_write(void *opaque, uint8_t *buffer, int size) {
#endif
    vm_fdio *io = opaque;
    int done = 0;
    while (done < size) {
        ssize_t count = pwrite(io->fd, buffer + done, (size_t)(size - done), (off_t)io->position);
        if (count < 0) {
            if (errno == EINTR) continue;
            return AVERROR(errno);
        }
        io->position += count;
        done += (int)count;
    }
    return size;
}

static int64_t fdio_seek(void *opaque, int64_t offset, int whence) {
    vm_fdio *io = opaque;
    struct stat info;
    if (whence & AVSEEK_SIZE) return fstat(io->fd, &info) == 0 ? (int64_t)info.st_size : AVERROR(errno);
    int64_t base;
    switch (whence & ~AVSEEK_FORCE) {
    case SEEK_SET: base = 0; break;
    case SEEK_CUR: base = io->position; break;
    case SEEK_END:
        if (fstat(io->fd, &info) != 0) return AVERROR(errno);
        base = (int64_t)info.st_size;
        break;
    default: return AVERROR(EINVAL);
    }
    if (offset > INT64_MAX - base || base + offset < 0) return AVERROR(EINVAL);
    io->position = base + offset;
    return io->position;
}

AVIOContext *vm_fdio_alloc(int fd, int writable) {
    const int size = 64 * 1024;
    vm_fdio *io = av_mallocz(sizeof *io);
    uint8_t *buffer = av_malloc(size);
    AVIOContext *context = NULL;
    if (io && buffer) context = avio_alloc_context(buffer, size, writable, io, fdio_read, fdio_write, fdio_seek);
    if (!context) {
        av_free(io);
        av_free(buffer);
        return NULL;
    }
    io->fd = fd;
    return context;
}

int vm_fdio_free(AVIOContext **context) {
    if (!context || !*context) return 0;
    avio_flush(*context);
    int error = (*context)->error;
    av_freep(&(*context)->opaque);
    av_freep(&(*context)->buffer);
    avio_context_free(context);
    return error;
}

typedef struct {
    void *owner;
    vm_source_read read;
    int64_t size;
    int64_t position;
} vm_sourceio;

static int sourceio_read(void *opaque, uint8_t *buffer, int size) {
    vm_sourceio *io = opaque;
    if (io->position >= io->size) return AVERROR_EOF;
    if ((int64_t)size > io->size - io->position) size = (int)(io->size - io->position);
    int count = io->read(io->owner, buffer, size, io->position);
    if (count == 0) return AVERROR_EOF;
    if (count > 0) io->position += count;
    return count;
}

static int64_t sourceio_seek(void *opaque, int64_t offset, int whence) {
    vm_sourceio *io = opaque;
    if (whence & AVSEEK_SIZE) return io->size;
    int64_t base;
    switch (whence & ~AVSEEK_FORCE) {
    case SEEK_SET: base = 0; break;
    case SEEK_CUR: base = io->position; break;
    case SEEK_END: base = io->size; break;
    default: return AVERROR(EINVAL);
    }
    if (offset > INT64_MAX - base || base + offset < 0) return AVERROR(EINVAL);
    io->position = base + offset;
    return io->position;
}

AVIOContext *vm_sourceio_alloc(void *owner, vm_source_read read, int64_t size) {
    // Larger than a file's buffer: each read that misses the cache is a request, and the demuxer
    // asks in buffer-sized pieces.
    const int buffer_size = 256 * 1024;
    vm_sourceio *io = av_mallocz(sizeof *io);
    uint8_t *buffer = av_malloc(buffer_size);
    AVIOContext *context = NULL;
    if (io && buffer) context = avio_alloc_context(buffer, buffer_size, 0, io, sourceio_read, NULL, sourceio_seek);
    if (!context) {
        av_free(io);
        av_free(buffer);
        return NULL;
    }
    io->owner = owner;
    io->read = read;
    io->size = size;
    return context;
}

// A muxer may reopen its own output for reading (faststart); any other URL is refused, and a
// demuxer may open nothing at all (an HLS playlist or a reference movie posing as a clip would
// otherwise make FFmpeg read other files).
static int open_own_output(AVFormatContext *s, AVIOContext **pb, const char *url, int flags, AVDictionary **options) {
    (void)options;
    if (!s->oformat || !s->pb || !s->pb->opaque || !url || !s->url || strcmp(url, s->url) != 0 ||
        (flags & AVIO_FLAG_WRITE))
        return AVERROR(EPERM);
    *pb = vm_fdio_alloc(((vm_fdio *)s->pb->opaque)->fd, 0);
    return *pb ? 0 : AVERROR(ENOMEM);
}

static int close_own(AVFormatContext *s, AVIOContext *pb) {
    (void)s;
    return vm_fdio_free(&pb);
}

void vm_format_use_fdio(AVFormatContext *s, AVIOContext *pb) {
    s->pb = pb;
    s->flags |= AVFMT_FLAG_CUSTOM_IO;
    s->io_open = open_own_output;
    s->io_close2 = close_own;
}
