#include "shim.h"
#include "library_loader.h"

// Every libpq function IncidentPostgres calls, with libpq-fe.h's signature.
#define LIBPQ_FUNCTIONS(F, V) \
    F(PGconn *, PQconnectdbParams, (const char *const *keywords, const char *const *values, int expand_dbname), (keywords, values, expand_dbname)) \
    F(PQconninfoOption *, PQconndefaults, (void), ()) \
    F(PQconninfoOption *, PQconninfoParse, (const char *conninfo, char **errmsg), (conninfo, errmsg)) \
    V(void, PQconninfoFree, (PQconninfoOption *options), (options)) \
    V(void, PQfinish, (PGconn *conn), (conn)) \
    F(ConnStatusType, PQstatus, (const PGconn *conn), (conn)) \
    F(PGTransactionStatusType, PQtransactionStatus, (const PGconn *conn), (conn)) \
    F(char *, PQerrorMessage, (const PGconn *conn), (conn)) \
    F(int, PQsocket, (const PGconn *conn), (conn)) \
    F(PQnoticeProcessor, PQsetNoticeProcessor, (PGconn *conn, PQnoticeProcessor proc, void *arg), (conn, proc, arg)) \
    F(PGcancel *, PQgetCancel, (PGconn *conn), (conn)) \
    V(void, PQfreeCancel, (PGcancel *cancel), (cancel)) \
    F(int, PQcancel, (PGcancel *cancel, char *errbuf, int errbufsize), (cancel, errbuf, errbufsize)) \
    F(PGresult *, PQexec, (PGconn *conn, const char *query), (conn, query)) \
    F(PGresult *, PQexecParams, (PGconn *conn, const char *command, int nParams, const Oid *paramTypes, \
                                 const char *const *paramValues, const int *paramLengths, const int *paramFormats, \
                                 int resultFormat), \
      (conn, command, nParams, paramTypes, paramValues, paramLengths, paramFormats, resultFormat)) \
    F(PGresult *, PQgetResult, (PGconn *conn), (conn)) \
    F(int, PQconsumeInput, (PGconn *conn), (conn)) \
    F(int, PQputCopyData, (PGconn *conn, const char *buffer, int nbytes), (conn, buffer, nbytes)) \
    F(int, PQputCopyEnd, (PGconn *conn, const char *errormsg), (conn, errormsg)) \
    F(ExecStatusType, PQresultStatus, (const PGresult *res), (res)) \
    F(char *, PQresultErrorMessage, (const PGresult *res), (res)) \
    F(char *, PQresultErrorField, (const PGresult *res, int fieldcode), (res, fieldcode)) \
    F(int, PQntuples, (const PGresult *res), (res)) \
    F(int, PQfnumber, (const PGresult *res, const char *field_name), (res, field_name)) \
    F(char *, PQgetvalue, (const PGresult *res, int tup_num, int field_num), (res, tup_num, field_num)) \
    F(int, PQgetlength, (const PGresult *res, int tup_num, int field_num), (res, tup_num, field_num)) \
    F(int, PQgetisnull, (const PGresult *res, int tup_num, int field_num), (res, tup_num, field_num)) \
    F(char *, PQcmdTuples, (PGresult *res), (res)) \
    V(void, PQclear, (PGresult *res), (res)) \
    V(void, PQfreemem, (void *ptr), (ptr))

CLIBRARY_DEFINE(LIBPQ_FUNCTIONS, "libpq.so.5",
                "PostgreSQL support needs libpq5: apt-get install libpq5")

char *clibpq_load(void) { return clibrary_load_error(&library); }
char *clibpq_probe(const char *soname) { return clibrary_probe(soname, library.missing); }
