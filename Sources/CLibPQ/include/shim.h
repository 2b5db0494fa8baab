// libpq (Debian libpq-dev to build, libpq5 to run), opened on first use: the functions
// IncidentPostgres calls are defined in libpq.c as calls into it (CLibraryLoader).
#include <postgresql/libpq-fe.h>

// Opens libpq.so.5 (once). Returns NULL, or what to tell the user (free() it): "PostgreSQL
// support needs libpq5: apt-get install libpq5 (dlopen's reason)".
char *clibpq_load(void);
// The message clibpq_load gives when `soname` cannot be opened (NULL when it can): for tests.
char *clibpq_probe(const char *soname);
