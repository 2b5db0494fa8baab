#include "shim.h"
#include "library_loader.h"

// Every libmicrohttpd function this target calls, with microhttpd.h's signature. The variadic
// ones: MHD_start_daemon is defined below over MHD_start_daemon_va; MHD_get_connection_info and
// MHD_get_daemon_info are called here only for kinds that take no further argument.
#define MHD_FUNCTIONS(F, V) \
    F(struct MHD_Daemon *, MHD_start_daemon_va, \
      (unsigned int flags, uint16_t port, MHD_AcceptPolicyCallback apc, void *apc_cls, MHD_AccessHandlerCallback dh, \
       void *dh_cls, va_list ap), (flags, port, apc, apc_cls, dh, dh_cls, ap)) \
    V(void, MHD_stop_daemon, (struct MHD_Daemon *daemon), (daemon)) \
    F(const union MHD_DaemonInfo *, MHD_get_daemon_info, (struct MHD_Daemon *daemon, enum MHD_DaemonInfoType info_type, ...), \
      (daemon, info_type)) \
    F(const union MHD_ConnectionInfo *, MHD_get_connection_info, \
      (struct MHD_Connection *connection, enum MHD_ConnectionInfoType info_type, ...), (connection, info_type)) \
    F(int, MHD_get_connection_values_n, \
      (struct MHD_Connection *connection, enum MHD_ValueKind kind, MHD_KeyValueIteratorN iterator, void *iterator_cls), \
      (connection, kind, iterator, iterator_cls)) \
    F(struct MHD_Response *, MHD_create_response_from_buffer, (size_t size, void *buffer, enum MHD_ResponseMemoryMode mode), \
      (size, buffer, mode)) \
    F(struct MHD_Response *, MHD_create_response_from_callback, \
      (uint64_t size, size_t block_size, MHD_ContentReaderCallback crc, void *crc_cls, MHD_ContentReaderFreeCallback crfc), \
      (size, block_size, crc, crc_cls, crfc)) \
    F(enum MHD_Result, MHD_add_response_header, (struct MHD_Response *response, const char *header, const char *content), \
      (response, header, content)) \
    F(enum MHD_Result, MHD_queue_response, (struct MHD_Connection *connection, unsigned int status_code, \
                                            struct MHD_Response *response), (connection, status_code, response)) \
    V(void, MHD_destroy_response, (struct MHD_Response *response), (response))

CLIBRARY_DEFINE(MHD_FUNCTIONS, "libmicrohttpd.so.12",
                "incidents serve needs libmicrohttpd12: apt-get install libmicrohttpd12")

struct MHD_Daemon *MHD_start_daemon(unsigned int flags, uint16_t port, MHD_AcceptPolicyCallback apc, void *apc_cls,
                                    MHD_AccessHandlerCallback dh, void *dh_cls, ...) {
    va_list ap;
    va_start(ap, dh_cls);
    struct MHD_Daemon *daemon = MHD_start_daemon_va(flags, port, apc, apc_cls, dh, dh_cls, ap);
    va_end(ap);
    return daemon;
}

char *cmhd_load(void) { return clibrary_load_error(&library); }
char *cmhd_probe(const char *soname) { return clibrary_probe(soname, library.missing); }
