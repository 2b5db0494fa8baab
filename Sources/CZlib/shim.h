// zlib 1.2 (Debian zlib1g-dev) for Swift: inflate with gzip headers.
#include <zlib.h>

// inflateInit2 is a macro, which Swift cannot call.
static inline int czlib_inflate_init_gzip(z_stream *stream) {
    return inflateInit2(stream, 16 + MAX_WBITS);
}

// deflateInit2 is a macro too: a gzip stream (RFC 1952) at `level` (`incidents serve`'s bodies).
static inline int czlib_deflate_init_gzip(z_stream *stream, int level) {
    return deflateInit2(stream, level, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
}
