// Terminal facts from glibc that Swift's Glibc module hides: wcwidth(3) is declared only under
// _XOPEN_SOURCE, which the module is not built with. The declaration is glibc's own (wchar.h).
#include <wchar.h>
extern int wcwidth(wchar_t c);
