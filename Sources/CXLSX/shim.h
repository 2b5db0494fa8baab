// libxlsxwriter 1.1 (Debian libxlsxwriter-dev) for Swift: .xlsx workbooks written row by row.
#include <xlsxwriter.h>
