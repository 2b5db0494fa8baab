// libxlsxwriter 1.1 (Debian libxlsxwriter-dev to build, libxlsxwriter4 to run) for Swift: .xlsx
// workbooks written row by row. Opened on first use: the functions IncidentApp calls are defined
// in xlsxwriter.c as calls into it (CLibraryLoader).
#include <xlsxwriter.h>

// Opens libxlsxwriter.so.4 (once). Returns NULL, or what to tell the user (free() it): "--format
// xlsx needs libxlsxwriter4: apt-get install libxlsxwriter4 (dlopen's reason)".
char *cxlsx_load(void);
// The message cxlsx_load gives when `soname` cannot be opened (NULL when it can): for tests.
char *cxlsx_probe(const char *soname);
