// OpenSSL's libcrypto (libssl-dev to build, libssl3 to run), opened on first use: the functions
// IncidentApp calls for the watches' signatures are defined in crypto.c as calls into it
// (CLibraryLoader). A missing libcrypto.so.3 at the first signature prints "webhook signatures
// need libssl3: apt-get install libssl3 (…)" and aborts (libcurl4, which the delivery needs
// anyway, depends on libssl3).
#include <openssl/evp.h>
#include <openssl/hmac.h>
