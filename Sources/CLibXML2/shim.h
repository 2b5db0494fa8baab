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
