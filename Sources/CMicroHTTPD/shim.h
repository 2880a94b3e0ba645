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
#include <sys/types.h>
#include <sys/socket.h>
#include <microhttpd.h>

/* One request, as Swift answers it: 1 to go on, 0 to close the connection. */
typedef int (*vm_mhd_handler)(void *context, struct MHD_Connection *connection, const char *url,
                              const char *method, const char *upload_data, size_t *upload_data_size,
                              void **request_context);

/* What the trampoline calls; the Swift owner keeps it alive until the daemon is stopped. */
struct vm_mhd_binding {
    vm_mhd_handler handler;
    void *context;
};

static inline enum MHD_Result vm_mhd_access(void *cls, struct MHD_Connection *connection, const char *url,
                                            const char *method, const char *version, const char *upload_data,
                                            size_t *upload_data_size, void **request_context) {
    (void)version;
    const struct vm_mhd_binding *binding = (const struct vm_mhd_binding *)cls;
    int go_on = binding->handler(binding->context, connection, url, method, upload_data, upload_data_size,
                                 request_context);
    return go_on ? MHD_YES : MHD_NO;
}

/* The limits a server keeps, whatever its clients do. */
struct vm_mhd_limits {
    unsigned int connections;
    unsigned int connections_per_ip;
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
        {MHD_OPTION_PER_IP_CONNECTION_LIMIT, (intptr_t)limits.connections_per_ip, NULL},
        {MHD_OPTION_CONNECTION_TIMEOUT, (intptr_t)limits.timeout_seconds, NULL},
        {MHD_OPTION_CONNECTION_MEMORY_LIMIT, (intptr_t)limits.memory_per_connection, NULL},
        {MHD_OPTION_THREAD_POOL_SIZE, (intptr_t)limits.threads, NULL},
        {MHD_OPTION_END, 0, NULL},
    };
    return MHD_start_daemon(MHD_USE_AUTO_INTERNAL_THREAD, 0, NULL, NULL, vm_mhd_access, binding,
                            MHD_OPTION_ARRAY, options, MHD_OPTION_END);
}

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

/* Calls `pair` for each request header (headers = 1) or query argument (headers = 0). */
static inline void vm_mhd_each_value(struct MHD_Connection *connection, int headers, vm_mhd_pair pair,
                                     void *context) {
    struct vm_mhd_pair_binding binding = {pair, context};
    MHD_get_connection_values(connection, headers ? MHD_HEADER_KIND : MHD_GET_ARGUMENT_KIND,
                              vm_mhd_pair_trampoline, &binding);
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
