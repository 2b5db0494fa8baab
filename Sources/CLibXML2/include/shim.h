// libxml2 (libxml2-dev to build, libxml2 to run), opened on first use: the functions
// IncidentXML calls are defined in libxml2.c as calls into it (CLibraryLoader), so that a query,
// which parses no XML, does not load it and the libraries it brings (ICU's libicuuc and its
// 30 MB libicudata, liblzma). A missing libxml2.so.2 at the first call prints "XML feeds need
// libxml2: apt-get install libxml2 (…)" and aborts.
//
// include/libxml is a link to /usr/include/libxml2/libxml (libxml2-dev): libxml2's headers
// include each other as <libxml/…>, and this target's include directory is on every dependent's
// header path, where pkg-config's -I/usr/include/libxml2 reached only the system-library target.
//
// libxml2 for Swift. Debian builds libxml2 with ICU; when a module sees both Foundation and
// libxml2's ICU-dependent headers, a clean build fails with "'UErrorCode' has different
// definitions in different modules". Nothing here needs ICU, so hide it before parser.h.
#include <libxml/xmlversion.h>
#undef LIBXML_ICU_ENABLED
#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/SAX2.h>
#include <libxml/xmlerror.h>
#include <libxml/encoding.h>
#include <libxml/entities.h>
#include <libxml/HTMLparser.h>

// Opens libxml2.so.2 (once). Returns NULL, or what to tell the user (free() it): "XML feeds need
// libxml2: apt-get install libxml2 (dlopen's reason)".
char *clibxml2_load(void);
// The message clibxml2_load gives when `soname` cannot be opened (NULL when it can): for tests.
char *clibxml2_probe(const char *soname);
