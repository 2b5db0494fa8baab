// libmicrohttpd 0.9.75 (Debian libmicrohttpd-dev) for Swift. microhttpd.h needs these first.
#include <stdarg.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <microhttpd.h>

// MHD_start_daemon is variadic, which Swift cannot call: the options the server sets, in C.
// `address` is a struct sockaddr_in or sockaddr_in6 (flags then hold MHD_USE_IPv6).
static inline struct MHD_Daemon *cmhd_start(unsigned int flags, const struct sockaddr *address,
                                            unsigned int connection_limit, unsigned int per_ip_limit,
                                            unsigned int idle_timeout_seconds,
                                            MHD_AccessHandlerCallback handler, void *handler_context,
                                            MHD_RequestCompletedCallback completed) {
    return MHD_start_daemon(flags, 0, NULL, NULL, handler, handler_context,
                            MHD_OPTION_SOCK_ADDR, address,
                            MHD_OPTION_CONNECTION_LIMIT, connection_limit,
                            MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_ip_limit,
                            MHD_OPTION_CONNECTION_TIMEOUT, idle_timeout_seconds,
                            MHD_OPTION_NOTIFY_COMPLETED, completed, handler_context,
                            MHD_OPTION_END);
}

// The port the daemon listens on (the one the system chose for port 0).
static inline uint16_t cmhd_bound_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info ? info->port : 0;
}

// The client's address as text (`127.0.0.1`, `::1`); empty when unknown.
#include <arpa/inet.h>
#include <netinet/in.h>
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
