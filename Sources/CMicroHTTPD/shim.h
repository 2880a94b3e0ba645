// The one C header Swift sees for libmicrohttpd, the dashboard's HTTP server. The version
// differences Swift would otherwise see live here, never as #if in Swift:
// - MHD_Result is a plain C enum in 0.9.x (Debian 12: 0.9.75), imported as a struct with global
//   constants, but a closed enum in 1.0 (Homebrew, Debian 13), imported as a Swift enum. Swift's
//   callbacks therefore return int, and the trampolines below turn it into MHD_Result.
// - MHD_create_response_from_buffer_copy exists from 0.9.76; before it, MUST_COPY says the same.
// - MHD_start_daemon is variadic (Swift cannot call it): vm_mhd_start passes an option array.
#ifndef VMERGE_CMICROHTTPD_SHIM_H
#define VMERGE_CMICROHTTPD_SHIM_H

#include <stdint.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/resource.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <microhttpd.h>

/* One request, as Swift answers it: 1 to go on, 0 to close the connection. */
typedef int (*vm_mhd_handler)(void *context, struct MHD_Connection *connection, const char *url,
                              const char *method, const char *upload_data, size_t *upload_data_size,
                              void **request_context);

/* A request has ended (answered, or its client gone): Swift frees what it kept in *request_context. */
typedef void (*vm_mhd_completed)(void *context, struct MHD_Connection *connection, void **request_context);

/* A connection was accepted (started = 1) or is being closed (0; its socket is closed after). */
typedef void (*vm_mhd_connection_event)(void *context, struct MHD_Connection *connection, int started);

/* A client is connecting from `family` (AF_INET, AF_INET6, AF_UNIX; 0 when unknown) and its
   address in `bytes` (4 or 16 bytes, none for AF_UNIX): 1 to accept it, 0 to close it at once. */
typedef int (*vm_mhd_accept)(void *context, int family, const unsigned char *bytes);

/* What the trampolines call; the Swift owner keeps it alive until the daemon is stopped. */
struct vm_mhd_binding {
    vm_mhd_handler handler;
    vm_mhd_completed completed;
    vm_mhd_connection_event connection_event;
    vm_mhd_accept accept;
    void *context;
};

/* The family of `address` (`length` bytes; NULL or too short: 0) and its address bytes in `bytes`
   (room for 16): 4 for IPv4, 16 for IPv6, none for a Unix socket's client (which has no name). */
static inline int vm_address_bytes(const struct sockaddr *address, size_t length, unsigned char *bytes) {
    if (address == NULL || length < sizeof(sa_family_t)) return 0;
    if (address->sa_family == AF_INET && length >= sizeof(struct sockaddr_in)) {
        memcpy(bytes, &((const struct sockaddr_in *)address)->sin_addr, 4);
        return AF_INET;
    }
    if (address->sa_family == AF_INET6 && length >= sizeof(struct sockaddr_in6)) {
        memcpy(bytes, &((const struct sockaddr_in6 *)address)->sin6_addr, 16);
        return AF_INET6;
    }
    return address->sa_family == AF_UNIX ? AF_UNIX : 0;
}

static inline enum MHD_Result vm_mhd_accept_trampoline(void *cls, const struct sockaddr *address, socklen_t length) {
    const struct vm_mhd_binding *binding = (const struct vm_mhd_binding *)cls;
    unsigned char bytes[16] = {0};
    int family = vm_address_bytes(address, (size_t)length, bytes);
    return binding->accept(binding->context, family, bytes) ? MHD_YES : MHD_NO;
}

/* The family and address of the client of `connection`, as vm_address_bytes gives them (the
   length is not known here: the family says it). */
static inline int vm_mhd_client_address(struct MHD_Connection *connection, unsigned char *bytes) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (info == NULL || info->client_addr == NULL) return 0;
    const struct sockaddr *address = info->client_addr;
    size_t length = address->sa_family == AF_INET    ? sizeof(struct sockaddr_in)
                    : address->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
                                                     : sizeof(sa_family_t);
    return vm_address_bytes(address, length, bytes);
}

static inline void vm_mhd_completed_trampoline(void *cls, struct MHD_Connection *connection,
                                               void **request_context, enum MHD_RequestTerminationCode code) {
    (void)code;
    const struct vm_mhd_binding *binding = (const struct vm_mhd_binding *)cls;
    binding->completed(binding->context, connection, request_context);
}

static inline void vm_mhd_connection_trampoline(void *cls, struct MHD_Connection *connection,
                                                void **socket_context, enum MHD_ConnectionNotificationCode code) {
    (void)socket_context;
    const struct vm_mhd_binding *binding = (const struct vm_mhd_binding *)cls;
    binding->connection_event(binding->context, connection, code == MHD_CONNECTION_NOTIFY_STARTED);
}

/* The connection's socket, or -1. */
static inline int vm_mhd_connection_fd(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info == NULL ? -1 : (int)info->connect_fd;
}

/* Percent-decoding of the path and query that leaves a text holding "%00" as it came: decoded, the
   NUL would end the C string there, and "/metrics%00anything" would be served as "/metrics". Left
   encoded, it matches no route. */
static inline size_t vm_mhd_unescape(void *cls, struct MHD_Connection *connection, char *text) {
    (void)cls;
    (void)connection;
    if (strstr(text, "%00") != NULL) return strlen(text);
    return MHD_http_unescape(text);
}

static inline enum MHD_Result vm_mhd_access(void *cls, struct MHD_Connection *connection, const char *url,
                                            const char *method, const char *version, const char *upload_data,
                                            size_t *upload_data_size, void **request_context) {
    (void)version;
    const struct vm_mhd_binding *binding = (const struct vm_mhd_binding *)cls;
    int go_on = binding->handler(binding->context, connection, url, method, upload_data, upload_data_size,
                                 request_context);
    return go_on ? MHD_YES : MHD_NO;
}

/* The limits a server keeps, whatever its clients do (the share of one client is kept by the
   accept callback: libmicrohttpd's own per-IP limit counts each loopback address apart, and
   refuses a Unix socket's clients). */
struct vm_mhd_limits {
    unsigned int connections;
    unsigned int timeout_seconds;
    size_t memory_per_connection;
    unsigned int threads;
};

/* Starts a daemon on `listen_fd` (bound and listening; the daemon closes it when stopped) with an
   internal thread pool (epoll, poll or select, as the system has). NULL if it cannot start. */
static inline struct MHD_Daemon *vm_mhd_start(int listen_fd, struct vm_mhd_binding *binding,
                                              struct vm_mhd_limits limits) {
    struct MHD_OptionItem options[] = {
        {MHD_OPTION_LISTEN_SOCKET, listen_fd, NULL},
        {MHD_OPTION_CONNECTION_LIMIT, (intptr_t)limits.connections, NULL},
        {MHD_OPTION_CONNECTION_TIMEOUT, (intptr_t)limits.timeout_seconds, NULL},
        {MHD_OPTION_CONNECTION_MEMORY_LIMIT, (intptr_t)limits.memory_per_connection, NULL},
        {MHD_OPTION_THREAD_POOL_SIZE, (intptr_t)limits.threads, NULL},
        {MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)vm_mhd_completed_trampoline, binding},
        {MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)vm_mhd_connection_trampoline, binding},
        {MHD_OPTION_UNESCAPE_CALLBACK, (intptr_t)vm_mhd_unescape, NULL},
        {MHD_OPTION_END, 0, NULL},
    };
    return MHD_start_daemon(MHD_USE_AUTO_INTERNAL_THREAD, 0, vm_mhd_accept_trampoline, binding, vm_mhd_access, binding,
                            MHD_OPTION_ARRAY, options, MHD_OPTION_END);
}

/* Raises the soft limit on open files to `count`, within the hard limit (RLIMIT_NOFILE is an enum
   on Linux, an int on macOS). */
static inline void vm_allow_descriptors(unsigned long count) {
    struct rlimit limit;
    if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur >= (rlim_t)count) return;
    limit.rlim_cur = limit.rlim_max < (rlim_t)count ? limit.rlim_max : (rlim_t)count;
    (void)setrlimit(RLIMIT_NOFILE, &limit);
}

/* Fills `address` for the Unix socket path `path`; -1 with errno ENAMETOOLONG when it does not
   fit sun_path. */
static inline int vm_unix_address(const char *path, struct sockaddr_un *address) {
    memset(address, 0, sizeof *address);
    address->sun_family = AF_UNIX;
    if (strlen(path) >= sizeof address->sun_path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(address->sun_path, path, strlen(path));
    return 0;
}

/* Binds `fd` to the Unix socket path `path` (0, or -1 and errno). bind never replaces a file: a
   name that exists fails with EADDRINUSE. */
static inline int vm_bind_unix(int fd, const char *path) {
    struct sockaddr_un address;
    if (vm_unix_address(path, &address) != 0) return -1;
    return bind(fd, (const struct sockaddr *)&address, (socklen_t)sizeof address);
}

/* Connects `fd` to the Unix socket at `path` (0, or -1 and errno). */
static inline int vm_connect_unix(int fd, const char *path) {
    struct sockaddr_un address;
    if (vm_unix_address(path, &address) != 0) return -1;
    return connect(fd, (const struct sockaddr *)&address, (socklen_t)sizeof address);
}

/* The most bytes a Unix socket's path may have. */
static inline size_t vm_unix_path_max(void) { return sizeof(((struct sockaddr_un *)0)->sun_path) - 1; }

/* A TCP socket (SOCK_STREAM is an enum on Linux, an int on macOS). */
static inline int vm_stream_socket(int domain) { return socket(domain, SOCK_STREAM, 0); }

/* One header or query argument, as Swift receives it: 1 to go on. */
typedef int (*vm_mhd_pair)(void *context, const char *key, const char *value);

struct vm_mhd_pair_binding {
    vm_mhd_pair pair;
    void *context;
};

static inline enum MHD_Result vm_mhd_pair_trampoline(void *cls, enum MHD_ValueKind kind, const char *key,
                                                     const char *value) {
    (void)kind;
    const struct vm_mhd_pair_binding *binding = (const struct vm_mhd_pair_binding *)cls;
    return binding->pair(binding->context, key, value) ? MHD_YES : MHD_NO;
}

/* What vm_mhd_each_value lists. */
enum vm_mhd_values { VM_MHD_QUERY = 0, VM_MHD_HEADERS = 1, VM_MHD_COOKIES = 2 };

/* Calls `pair` for each request header, query argument or cookie (as libmicrohttpd parsed them). */
static inline void vm_mhd_each_value(struct MHD_Connection *connection, enum vm_mhd_values which, vm_mhd_pair pair,
                                     void *context) {
    struct vm_mhd_pair_binding binding = {pair, context};
    enum MHD_ValueKind kind = which == VM_MHD_HEADERS   ? MHD_HEADER_KIND
                              : which == VM_MHD_COOKIES ? MHD_COOKIE_KIND
                                                        : MHD_GET_ARGUMENT_KIND;
    MHD_get_connection_values(connection, kind, vm_mhd_pair_trampoline, &binding);
}

/* A form field's bytes, as libmicrohttpd's post processor decodes them: a long value may come in
   several pieces, `offset` saying where this one goes. 1 to go on. */
typedef int (*vm_mhd_field)(void *context, const char *key, const char *data, uint64_t offset, size_t size);

/* A request body being decoded as a form (application/x-www-form-urlencoded or multipart). */
struct vm_mhd_form {
    struct MHD_PostProcessor *processor;
    vm_mhd_field field;
    void *context;
};

static inline enum MHD_Result vm_mhd_form_iterator(void *cls, enum MHD_ValueKind kind, const char *key,
                                                   const char *filename, const char *content_type,
                                                   const char *transfer_encoding, const char *data,
                                                   uint64_t offset, size_t size) {
    (void)kind;
    (void)filename;
    (void)content_type;
    (void)transfer_encoding;
    const struct vm_mhd_form *form = (const struct vm_mhd_form *)cls;
    return key != NULL && form->field(form->context, key, data, offset, size) ? MHD_YES : MHD_NO;
}

/* A form decoder for the request, or NULL when its body is not a form (or out of memory). */
static inline struct vm_mhd_form *vm_mhd_form_open(struct MHD_Connection *connection, vm_mhd_field field,
                                                   void *context) {
    struct vm_mhd_form *form = (struct vm_mhd_form *)calloc(1, sizeof *form);
    if (form == NULL) return NULL;
    form->field = field;
    form->context = context;
    form->processor = MHD_create_post_processor(connection, 1024, vm_mhd_form_iterator, form);
    if (form->processor == NULL) {
        free(form);
        return NULL;
    }
    return form;
}

/* Feeds body bytes to the decoder; 1 when they were decoded. */
static inline int vm_mhd_form_feed(struct vm_mhd_form *form, const char *data, size_t size) {
    return MHD_post_process(form->processor, data, size) == MHD_YES;
}

static inline void vm_mhd_form_close(struct vm_mhd_form *form) {
    MHD_destroy_post_processor(form->processor);
    free(form);
}

/* The request header `name` (any case), or NULL. */
static inline const char *vm_mhd_header(struct MHD_Connection *connection, const char *name) {
    return MHD_lookup_connection_value(connection, MHD_HEADER_KIND, name);
}

/* A response holding its own copy of `size` bytes. */
static inline struct MHD_Response *vm_mhd_response_copy(size_t size, const void *bytes) {
#if MHD_VERSION >= 0x00097601
    return MHD_create_response_from_buffer_copy(size, bytes);
#else
    return MHD_create_response_from_buffer(size, (void *)bytes, MHD_RESPMEM_MUST_COPY);
#endif
}

/* Queues `response` with `status`; 1 when queued. */
static inline int vm_mhd_queue(struct MHD_Connection *connection, unsigned int status,
                               struct MHD_Response *response) {
    return MHD_queue_response(connection, status, response) == MHD_YES;
}

/* Adds a header to `response`; 1 when added (0: the value holds a line break, or out of memory). */
static inline int vm_mhd_add_header(struct MHD_Response *response, const char *name, const char *value) {
    return MHD_add_response_header(response, name, value) == MHD_YES;
}

#endif
