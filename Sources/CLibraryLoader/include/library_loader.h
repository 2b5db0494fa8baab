// A C library opened on first use (dlopen) instead of at process start (docs/development.md,
// "C libraries opened on first use"). Each wrapping C target (CLibPQ, CMicroHTTPD, CXLSX, CCurl, CCrypto)
// defines the library's functions its Swift target calls, with the header's own signatures, as
// calls through pointers that clibrary_load resolves once; the Swift call sites stay unchanged.
#ifndef LIBRARY_LOADER_H
#define LIBRARY_LOADER_H
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

struct clibrary {
    const char *soname;             // e.g. "libpq.so.5" (the Debian runtime package's file)
    const char *missing;            // what to tell the user when it cannot be opened, e.g.
                                    // "PostgreSQL support needs libpq5: apt-get install libpq5"
    const char *const *names;       // the functions to resolve, `count` of them
    void **slots;                   // where their addresses go, in the same order
    size_t count;
    pthread_mutex_t lock;
    atomic_int loaded;              // 1 once every slot is resolved (written under lock)
    char error[512];                // why the last attempt failed
};

// Opens the library and resolves every function, once (thread-safe; a failed attempt is retried
// at the next call). Returns 0, or -1 with `library->error` set to "MISSING (dlerror's reason)".
int clibrary_load(struct clibrary *library);

// clibrary_load or, when it fails, the error on stderr and abort(): for a function called
// before its Swift target loaded the library (a bug: every entry point loads it first).
void clibrary_require(struct clibrary *library);

// Opens `soname` as clibrary_load would, with the same message on failure, and closes it again:
// the check behind a test of the message. Returns NULL, or the message (free() it).
char *clibrary_probe(const char *soname, const char *missing);

// clibrary_load for a Swift caller: NULL when loaded, or the message (free() it).
char *clibrary_load_error(struct clibrary *library);

// The address of function `index` of `library` (a `struct clibrary`), loading it first if needed.
#define CLIBRARY_FUNCTION(library, index) \
    (atomic_load_explicit(&(library).loaded, memory_order_acquire) ? (library).slots[index] \
                                                                    : (clibrary_require(&(library)), (library).slots[index]))

// The parts of a wrapping target's table, from its list of functions
// `LIST(F, V)`, with `F(return type, name, (parameters), (arguments))` per function and
// `V(void, name, (parameters), (arguments))` per function that returns nothing:
//   CLIBRARY_INDEX      an enum entry per function: `clibrary_index_NAME`
//   CLIBRARY_NAME       its name, for the table of names
//   CLIBRARY_CALL(_VOID) its definition: a call through the address clibrary_load resolved
#define CLIBRARY_INDEX(ret, name, params, args) clibrary_index_##name,
#define CLIBRARY_NAME(ret, name, params, args) #name,
#define CLIBRARY_CALL(library, ret, name, params, args) \
    ret name params { return ((ret(*) params)CLIBRARY_FUNCTION(library, clibrary_index_##name)) args; }
#define CLIBRARY_CALL_VOID(library, ret, name, params, args) \
    void name params { ((void(*) params)CLIBRARY_FUNCTION(library, clibrary_index_##name)) args; }

// A wrapping target's library, `library`, with the functions of LIST (above) defined as calls into it.
#define CLIBRARY_CALL_LIBRARY(ret, name, params, args) CLIBRARY_CALL(library, ret, name, params, args)
#define CLIBRARY_CALL_VOID_LIBRARY(ret, name, params, args) CLIBRARY_CALL_VOID(library, ret, name, params, args)
#define CLIBRARY_DEFINE(LIST, soname_, missing_) \
    enum { LIST(CLIBRARY_INDEX, CLIBRARY_INDEX) clibrary_count }; \
    static const char *const clibrary_names[] = { LIST(CLIBRARY_NAME, CLIBRARY_NAME) }; \
    static void *clibrary_slots[clibrary_count]; \
    static struct clibrary library = { \
        .soname = soname_, .missing = missing_, .names = clibrary_names, .slots = clibrary_slots, \
        .count = clibrary_count, .lock = PTHREAD_MUTEX_INITIALIZER, \
    }; \
    LIST(CLIBRARY_CALL_LIBRARY, CLIBRARY_CALL_VOID_LIBRARY)

#endif
