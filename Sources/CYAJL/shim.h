// yajl 2.1 (Debian libyajl-dev) for Swift: the push parser API.
#include <yajl/yajl_parse.h>

// yajl_config is variadic, which Swift cannot call; every parser option takes one int.
static inline int cyajl_config(yajl_handle handle, yajl_option option, int on) {
    return yajl_config(handle, option, on);
}
