// libmicrohttpd 0.9.75 (Debian libmicrohttpd-dev to build, libmicrohttpd12 to run) for Swift, opened
// on first use: the functions used here and by IncidentHTTP are defined in microhttpd.c as calls into
// it (CLibraryLoader). microhttpd.h needs these first.
#include <stdarg.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <microhttpd.h>
#include <arpa/inet.h>
#include <netinet/in.h>

// Opens libmicrohttpd.so.12 (once). Returns NULL, or what to tell the user (free() it): "incidents
// serve needs libmicrohttpd12: apt-get install libmicrohttpd12 (dlopen's reason)".
char *cmhd_load(void);
// The message cmhd_load gives when `soname` cannot be opened (NULL when it can): for tests.
char *cmhd_probe(const char *soname);

// The server's own limit on open connections. libmicrohttpd, once it holds its
// MHD_OPTION_CONNECTION_LIMIT, stops polling the listening socket: a further client waits in the
// kernel's backlog, unanswered, until a connection closes. So its limit is set above this one and
// the accept policy refuses (closes at once) a connection beyond it, counted by the notify callback.
#include <stdatomic.h>
#include <stdlib.h>
struct cmhd_limit {
    atomic_uint open;
    unsigned int limit;
};

static inline enum MHD_Result cmhd_accept_policy(void *cls, const struct sockaddr *address, socklen_t length) {
    (void)address; (void)length;
    struct cmhd_limit *limit = (struct cmhd_limit *)cls;
    return atomic_load(&limit->open) < limit->limit ? MHD_YES : MHD_NO;
}

static inline void cmhd_notify_connection(void *cls, struct MHD_Connection *connection, void **socket_context,
                                          enum MHD_ConnectionNotificationCode code) {
    (void)connection; (void)socket_context;
    struct cmhd_limit *limit = (struct cmhd_limit *)cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) atomic_fetch_add(&limit->open, 1);
    else atomic_fetch_sub(&limit->open, 1);
}

// MHD_OPTION_URI_LOG_CALLBACK's function: gets the request target as sent (before percent-decoding);
// returns the request's first `con_cls`.
typedef void *(*cmhd_uri_log)(void *cls, const char *uri, struct MHD_Connection *connection);

// MHD_start_daemon is variadic, which Swift cannot call: the options the server sets, in C.
// `address` is a struct sockaddr_in or sockaddr_in6 (flags then hold MHD_USE_IPv6). `limit_state`
// (cmhd_limit_create) lives as long as the daemon. `memory_limit`: bytes per connection for its request line,
// headers and parameters (libmicrohttpd's pool; pages are only resident once used).
static inline struct MHD_Daemon *cmhd_start(unsigned int flags, const struct sockaddr *address,
                                            void *limit_state, unsigned int per_ip_limit,
                                            unsigned int idle_timeout_seconds, size_t memory_limit,
                                            MHD_AccessHandlerCallback handler, void *handler_context,
                                            MHD_RequestCompletedCallback completed, cmhd_uri_log uri_log) {
    struct cmhd_limit *limit = (struct cmhd_limit *)limit_state;
    return MHD_start_daemon(flags, 0, cmhd_accept_policy, limit, handler, handler_context,
                            MHD_OPTION_SOCK_ADDR, address,
                            MHD_OPTION_CONNECTION_LIMIT, limit->limit + 64,
                            MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_ip_limit,
                            MHD_OPTION_CONNECTION_TIMEOUT, idle_timeout_seconds,
                            MHD_OPTION_CONNECTION_MEMORY_LIMIT, memory_limit,
                            MHD_OPTION_NOTIFY_CONNECTION, cmhd_notify_connection, limit,
                            MHD_OPTION_NOTIFY_COMPLETED, completed, handler_context,
                            MHD_OPTION_URI_LOG_CALLBACK, uri_log, handler_context,
                            MHD_OPTION_END);
}

// A limit for cmhd_start, freed with free() after MHD_stop_daemon (opaque to Swift).
static inline void *cmhd_limit_create(unsigned int limit) {
    struct cmhd_limit *made = calloc(1, sizeof *made);
    if (made) made->limit = limit;
    return made;
}

// The local address and port a connection came in on, as text for a URL (`127.0.0.1:8080`,
// `[::1]:8080`); empty when unknown.
#include <stdio.h>
static inline void cmhd_local_address(struct MHD_Connection *connection, char *text, size_t size) {
    text[0] = 0;
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (!info) return;
    struct sockaddr_storage address;
    socklen_t length = sizeof address;
    if (getsockname(info->connect_fd, (struct sockaddr *)&address, &length) != 0) return;
    char host[64] = "";
    if (address.ss_family == AF_INET) {
        const struct sockaddr_in *v4 = (const struct sockaddr_in *)&address;
        inet_ntop(AF_INET, &v4->sin_addr, host, sizeof host);
        snprintf(text, size, "%s:%u", host, (unsigned)ntohs(v4->sin_port));
    } else if (address.ss_family == AF_INET6) {
        const struct sockaddr_in6 *v6 = (const struct sockaddr_in6 *)&address;
        inet_ntop(AF_INET6, &v6->sin6_addr, host, sizeof host);
        snprintf(text, size, "[%s]:%u", host, (unsigned)ntohs(v6->sin6_port));
    }
}

// The port the daemon listens on (the one the system chose for port 0).
static inline uint16_t cmhd_bound_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info ? info->port : 0;
}

// The client's address as text (`127.0.0.1`, `::1`); empty when unknown.
static inline void cmhd_client_address(struct MHD_Connection *connection, char *text, socklen_t size) {
    text[0] = 0;
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (!info || !info->client_addr) return;
    const struct sockaddr *address = info->client_addr;
    if (address->sa_family == AF_INET) {
        inet_ntop(AF_INET, &((const struct sockaddr_in *)address)->sin_addr, text, size);
    } else if (address->sa_family == AF_INET6) {
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)address)->sin6_addr, text, size);
    }
}
