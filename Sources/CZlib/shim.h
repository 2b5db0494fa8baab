// zlib 1.2 (Debian zlib1g-dev) for Swift: inflate with gzip headers.
#include <zlib.h>

// inflateInit2 is a macro, which Swift cannot call.
static inline int czlib_inflate_init_gzip(z_stream *stream) {
    return inflateInit2(stream, 16 + MAX_WBITS);
}
