#include "shim.h"
#include "library_loader.h"

// Every libcrypto function IncidentApp calls, with OpenSSL 3's declarations.
#define CRYPTO_FUNCTIONS(F, V) \
    F(const EVP_MD *, EVP_sha256, (void), ()) \
    F(unsigned char *, HMAC, (const EVP_MD *evp_md, const void *key, int key_len, const unsigned char *data, size_t data_len, \
                              unsigned char *md, unsigned int *md_len), (evp_md, key, key_len, data, data_len, md, md_len))

CLIBRARY_DEFINE(CRYPTO_FUNCTIONS, "libcrypto.so.3",
                "webhook signatures need libssl3: apt-get install libssl3")
