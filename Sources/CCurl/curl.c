// The variadic setopt/getinfo functions are defined here as functions, not curl.h's type-checking macros.
#define CURL_DISABLE_TYPECHECK
#include <stdarg.h>
#include <curl/curl.h>
#include "shim.h"
#include "library_loader.h"

// Every libcurl function FoundationNetworking (swift-corelibs-foundation 6.3's
// _CFURLSessionInterface) calls, with curl.h's signature (`nm -u lib_CFURLSessionInterface.a`).
#define CURL_FUNCTIONS(F, V) \
    F(CURLcode, curl_global_init, (long flags), (flags)) \
    F(char *, curl_version, (void), ()) \
    F(curl_version_info_data *, curl_version_info, (CURLversion version), (version)) \
    F(CURL *, curl_easy_init, (void), ()) \
    V(void, curl_easy_cleanup, (CURL *curl), (curl)) \
    F(CURLcode, curl_easy_pause, (CURL *handle, int bitmask), (handle, bitmask)) \
    F(const char *, curl_easy_strerror, (CURLcode code), (code)) \
    V(void, curl_free, (void *p), (p)) \
    F(CURLM *, curl_multi_init, (void), ()) \
    F(CURLMcode, curl_multi_cleanup, (CURLM *multi_handle), (multi_handle)) \
    F(CURLMcode, curl_multi_add_handle, (CURLM *multi_handle, CURL *curl_handle), (multi_handle, curl_handle)) \
    F(CURLMcode, curl_multi_remove_handle, (CURLM *multi_handle, CURL *curl_handle), (multi_handle, curl_handle)) \
    F(CURLMcode, curl_multi_assign, (CURLM *multi_handle, curl_socket_t sockfd, void *sockp), (multi_handle, sockfd, sockp)) \
    F(CURLMsg *, curl_multi_info_read, (CURLM *multi_handle, int *msgs_in_queue), (multi_handle, msgs_in_queue)) \
    F(CURLMcode, curl_multi_socket_action, (CURLM *multi_handle, curl_socket_t s, int ev_bitmask, int *running_handles), \
      (multi_handle, s, ev_bitmask, running_handles)) \
    F(struct curl_slist *, curl_slist_append, (struct curl_slist *list, const char *data), (list, data)) \
    V(void, curl_slist_free_all, (struct curl_slist *list), (list)) \
    F(CURLU *, curl_url, (void), ()) \
    F(CURLUcode, curl_url_get, (CURLU *handle, CURLUPart what, char **part, unsigned int flags), (handle, what, part, flags)) \
    F(CURLUcode, curl_url_set, (CURLU *handle, CURLUPart what, const char *part, unsigned int flags), (handle, what, part, flags))

// And the variadic three, defined below over their one argument.
#define CURL_VARIADIC(F) F(curl_easy_setopt) F(curl_multi_setopt) F(curl_easy_getinfo)
#define CURL_VARIADIC_INDEX(name) clibrary_index_##name,
#define CURL_VARIADIC_NAME(name) #name,

enum { CURL_FUNCTIONS(CLIBRARY_INDEX, CLIBRARY_INDEX) CURL_VARIADIC(CURL_VARIADIC_INDEX) curl_count };
static const char *const curl_names[] = {
    CURL_FUNCTIONS(CLIBRARY_NAME, CLIBRARY_NAME) CURL_VARIADIC(CURL_VARIADIC_NAME)
};
static void *curl_slots[curl_count];
static struct clibrary library = {
    .soname = "libcurl.so.4", .missing = "HTTP requests need libcurl4: apt-get install libcurl4",
    .names = curl_names, .slots = curl_slots, .count = curl_count, .lock = PTHREAD_MUTEX_INITIALIZER,
};

#define CURL_CALL(ret, name, params, args) CLIBRARY_CALL(library, ret, name, params, args)
#define CURL_CALL_VOID(ret, name, params, args) CLIBRARY_CALL_VOID(library, ret, name, params, args)
CURL_FUNCTIONS(CURL_CALL, CURL_CALL_VOID)

// An option's one argument, read as its type (curl.h: the option's number says which, in steps of
// 10000: long, object pointer, function pointer, curl_off_t, blob pointer), and passed on as it.
#define CURL_FORWARD_OPTION(ret, name, handle_type, handle, option_type, option) \
    va_list ap; \
    va_start(ap, option); \
    ret (*real)(handle_type, option_type, ...) = (ret(*)(handle_type, option_type, ...))CLIBRARY_FUNCTION(library, clibrary_index_##name); \
    ret result; \
    if (option < CURLOPTTYPE_OBJECTPOINT) { \
        result = real(handle, option, va_arg(ap, long)); \
    } else if (option < CURLOPTTYPE_FUNCTIONPOINT || (option >= CURLOPTTYPE_BLOB)) { \
        result = real(handle, option, va_arg(ap, void *)); \
    } else if (option < CURLOPTTYPE_OFF_T) { \
        result = real(handle, option, va_arg(ap, void (*)(void))); \
    } else { \
        result = real(handle, option, va_arg(ap, curl_off_t)); \
    } \
    va_end(ap); \
    return result;

CURLcode curl_easy_setopt(CURL *curl_handle, CURLoption option, ...) {
    CURL_FORWARD_OPTION(CURLcode, curl_easy_setopt, CURL *, curl_handle, CURLoption, option)
}

CURLMcode curl_multi_setopt(CURLM *multi_handle, CURLMoption option, ...) {
    CURL_FORWARD_OPTION(CURLMcode, curl_multi_setopt, CURLM *, multi_handle, CURLMoption, option)
}

// Every CURLINFO's argument is a pointer to where the answer goes.
CURLcode curl_easy_getinfo(CURL *curl_handle, CURLINFO info, ...) {
    va_list ap;
    va_start(ap, info);
    void *answer = va_arg(ap, void *);
    va_end(ap);
    return ((CURLcode(*)(CURL *, CURLINFO, ...))CLIBRARY_FUNCTION(library, clibrary_index_curl_easy_getinfo))(curl_handle, info, answer);
}

char *ccurl_load(void) { return clibrary_load_error(&library); }
char *ccurl_probe(const char *soname) { return clibrary_probe(soname, library.missing); }
