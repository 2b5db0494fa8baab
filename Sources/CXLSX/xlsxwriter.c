#include "shim.h"
#include "library_loader.h"

// Every libxlsxwriter function IncidentApp calls, with xlsxwriter.h's signature.
#define XLSX_FUNCTIONS(F, V) \
    F(lxw_workbook *, workbook_new_opt, (const char *filename, lxw_workbook_options *options), (filename, options)) \
    F(lxw_worksheet *, workbook_add_worksheet, (lxw_workbook *workbook, const char *sheetname), (workbook, sheetname)) \
    F(lxw_format *, workbook_add_format, (lxw_workbook *workbook), (workbook)) \
    F(lxw_error, workbook_close, (lxw_workbook *workbook), (workbook)) \
    V(void, format_set_bold, (lxw_format *format), (format)) \
    V(void, format_set_num_format, (lxw_format *format, const char *num_format), (format, num_format)) \
    F(lxw_error, worksheet_write_number, (lxw_worksheet *worksheet, lxw_row_t row, lxw_col_t col, double number, \
                                          lxw_format *format), (worksheet, row, col, number, format)) \
    F(lxw_error, worksheet_write_string, (lxw_worksheet *worksheet, lxw_row_t row, lxw_col_t col, const char *string, \
                                          lxw_format *format), (worksheet, row, col, string, format)) \
    F(lxw_error, worksheet_autofilter, (lxw_worksheet *worksheet, lxw_row_t first_row, lxw_col_t first_col, \
                                        lxw_row_t last_row, lxw_col_t last_col), \
      (worksheet, first_row, first_col, last_row, last_col)) \
    V(void, worksheet_freeze_panes, (lxw_worksheet *worksheet, lxw_row_t row, lxw_col_t col), (worksheet, row, col)) \
    F(char *, lxw_strerror, (lxw_error error_num), (error_num))

CLIBRARY_DEFINE(XLSX_FUNCTIONS, "libxlsxwriter.so.4",
                "--format xlsx needs libxlsxwriter4: apt-get install libxlsxwriter4")

char *cxlsx_load(void) { return clibrary_load_error(&library); }
char *cxlsx_probe(const char *soname) { return clibrary_probe(soname, library.missing); }
