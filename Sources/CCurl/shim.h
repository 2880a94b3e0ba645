// The one C header Swift sees for libcurl, vmerge's HTTP client (object storage, https inputs,
// webhooks). curl_easy_setopt and curl_easy_getinfo are variadic, which Swift cannot call: the
// functions below pass one typed argument each. Everything else imports as it is. Every option used
// here exists from libcurl 7.75 (CURLOPT_AWS_SIGV4) on; Debian 12 has 7.88.
#ifndef VMERGE_CCURL_SHIM_H
#define VMERGE_CCURL_SHIM_H

#include <curl/curl.h>
#include <netinet/in.h>
#include <sys/socket.h>

static inline CURLcode vm_curl_set_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode vm_curl_set_offset(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}
/* libcurl copies strings it is given (from 7.17), so Swift's temporary C string is enough. */
static inline CURLcode vm_curl_set_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode vm_curl_set_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode vm_curl_set_headers(CURL *handle, struct curl_slist *list) {
    return curl_easy_setopt(handle, CURLOPT_HTTPHEADER, list);
}

/* Data arriving (body or one header line): the count taken, anything else stops the transfer. */
typedef size_t (*vm_curl_data)(char *bytes, size_t size, size_t count, void *context);
static inline CURLcode vm_curl_on_body(CURL *handle, vm_curl_data callback, void *context) {
    CURLcode code = curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, callback);
    return code != CURLE_OK ? code : curl_easy_setopt(handle, CURLOPT_WRITEDATA, context);
}
static inline CURLcode vm_curl_on_header(CURL *handle, vm_curl_data callback, void *context) {
    CURLcode code = curl_easy_setopt(handle, CURLOPT_HEADERFUNCTION, callback);
    return code != CURLE_OK ? code : curl_easy_setopt(handle, CURLOPT_HEADERDATA, context);
}
/* The body to send: fills the buffer, 0 at its end, CURL_READFUNC_ABORT to stop. */
static inline CURLcode vm_curl_on_upload(CURL *handle, vm_curl_data callback, void *context) {
    CURLcode code = curl_easy_setopt(handle, CURLOPT_READFUNCTION, callback);
    return code != CURLE_OK ? code : curl_easy_setopt(handle, CURLOPT_READDATA, context);
}
/* Progress, called about once a second even when nothing moves: non-zero stops the transfer
   (vmerge's cancellation reaches a transfer here). */
typedef int (*vm_curl_progress)(void *context, curl_off_t download_total, curl_off_t downloaded,
                                curl_off_t upload_total, curl_off_t uploaded);
static inline CURLcode vm_curl_on_progress(CURL *handle, vm_curl_progress callback, void *context) {
    CURLcode code = curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, callback);
    if (code == CURLE_OK) code = curl_easy_setopt(handle, CURLOPT_XFERINFODATA, context);
    return code != CURLE_OK ? code : curl_easy_setopt(handle, CURLOPT_NOPROGRESS, 0L);
}

/* Asked before each connection with the address it would go to (AF_INET: 4 bytes, AF_INET6: 16):
   non-zero lets it be made. Asked after name resolution, for the very address, so a name that
   resolves to a private address (or is made to, between two lookups) is caught where it connects. */
typedef int (*vm_curl_address_check)(void *context, int family, const unsigned char *bytes);

struct vm_curl_address_guard {
    vm_curl_address_check check;
    void *context;
};

static curl_socket_t vm_curl_open_socket(void *data, curlsocktype purpose, struct curl_sockaddr *address) {
    struct vm_curl_address_guard *guard = data;
    if (purpose == CURLSOCKTYPE_IPCXN && guard && guard->check) {
        const unsigned char *bytes = NULL;
        if (address->family == AF_INET)
            bytes = (const unsigned char *)&((struct sockaddr_in *)&address->addr)->sin_addr;
        else if (address->family == AF_INET6)
            bytes = (const unsigned char *)&((struct sockaddr_in6 *)&address->addr)->sin6_addr;
        if (!bytes || !guard->check(guard->context, address->family, bytes)) return CURL_SOCKET_BAD;
    }
    return socket(address->family, address->socktype, address->protocol);
}

/* `guard` must live as long as the transfer. */
static inline CURLcode vm_curl_guard_addresses(CURL *handle, struct vm_curl_address_guard *guard) {
    CURLcode code = curl_easy_setopt(handle, CURLOPT_OPENSOCKETFUNCTION, vm_curl_open_socket);
    return code != CURLE_OK ? code : curl_easy_setopt(handle, CURLOPT_OPENSOCKETDATA, guard);
}

static inline CURLcode vm_curl_get_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}
static inline CURLcode vm_curl_get_string(CURL *handle, CURLINFO info, char **value) {
    return curl_easy_getinfo(handle, info, value);
}
static inline CURLcode vm_curl_get_offset(CURL *handle, CURLINFO info, curl_off_t *value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline size_t vm_curl_read_abort(void) { return CURL_READFUNC_ABORT; }
/* CURLVERSION_NOW is a macro naming the newest version of the struct this header knows. */
static inline const curl_version_info_data *vm_curl_version(void) { return curl_version_info(CURLVERSION_NOW); }

#endif
