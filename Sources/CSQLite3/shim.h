#include <sqlite3.h>

// SQLITE_TRANSIENT is a macro over a cast of -1 that Swift cannot import.
static inline sqlite3_destructor_type csqlite3_transient(void) { return SQLITE_TRANSIENT; }

// sqlite3_config is variadic, which Swift cannot call. Turning off memory statistics removes a
// global mutex from every SQLite allocation (https://www.sqlite.org/c3ref/c_config_covering_index_scan.html
// SQLITE_CONFIG_MEMSTATUS); it must run before SQLite initializes.
static inline int csqlite3_disable_memstatus(void) { return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0); }

// Gives the heap's free pages back to the system (glibc's malloc_trim(3), which Swift's Glibc
// module does not declare): after SQLite freed a large page cache (PollWriter.restoreCacheSize).
#include <malloc.h>
static inline void csqlite3_trim_heap(void) { malloc_trim(0); }
