#include "shim.h"
#include "library_loader.h"

// Every libxml2 function IncidentXML calls, with libxml2 2.9's declarations.
#define LIBXML2_FUNCTIONS(F, V) \
    V(void, xmlInitParser, (void), ()) \
    V(void, xmlSetExternalEntityLoader, (xmlExternalEntityLoader f), (f)) \
    F(xmlParserCtxtPtr, xmlCreatePushParserCtxt, (xmlSAXHandlerPtr sax, void *user_data, const char *chunk, int size, \
                                                  const char *filename), (sax, user_data, chunk, size, filename)) \
    F(int, xmlCtxtUseOptions, (xmlParserCtxtPtr ctxt, int options), (ctxt, options)) \
    F(int, xmlParseChunk, (xmlParserCtxtPtr ctxt, const char *chunk, int size, int terminate), (ctxt, chunk, size, terminate)) \
    V(void, xmlFreeParserCtxt, (xmlParserCtxtPtr ctxt), (ctxt)) \
    F(xmlStructuredErrorFunc *, __xmlStructuredError, (void), ()) \
    F(void **, __xmlStructuredErrorContext, (void), ()) \
    V(void, xmlSetStructuredErrorFunc, (void *ctx, xmlStructuredErrorFunc handler), (ctx, handler)) \
    F(xmlChar *, xmlStringLenDecodeEntities, (xmlParserCtxtPtr ctxt, const xmlChar *str, int len, int what, \
                                              xmlChar end, xmlChar end2, xmlChar end3), \
      (ctxt, str, len, what, end, end2, end3)) \
    F(xmlDocPtr, xmlNewDoc, (const xmlChar *version), (version)) \
    V(void, xmlFreeDoc, (xmlDocPtr cur), (cur)) \
    F(xmlDtdPtr, xmlCreateIntSubset, (xmlDocPtr doc, const xmlChar *name, const xmlChar *ExternalID, \
                                      const xmlChar *SystemID), (doc, name, ExternalID, SystemID)) \
    F(xmlEntityPtr, xmlGetDocEntity, (const xmlDoc *doc, const xmlChar *name), (doc, name)) \
    F(xmlEntityPtr, xmlAddDocEntity, (xmlDocPtr doc, const xmlChar *name, int type, const xmlChar *ExternalID, \
                                      const xmlChar *SystemID, const xmlChar *content), \
      (doc, name, type, ExternalID, SystemID, content)) \
    V(void, xmlSAX2StartDocument, (void *ctx), (ctx)) \
    V(void, xmlSAX2InternalSubset, (void *ctx, const xmlChar *name, const xmlChar *ExternalID, const xmlChar *SystemID), \
      (ctx, name, ExternalID, SystemID)) \
    V(void, xmlSAX2EntityDecl, (void *ctx, const xmlChar *name, int type, const xmlChar *publicId, \
                                const xmlChar *systemId, xmlChar *content), (ctx, name, type, publicId, systemId, content)) \
    F(xmlEntityPtr, xmlSAX2GetEntity, (void *ctx, const xmlChar *name), (ctx, name)) \
    F(xmlEntityPtr, xmlSAX2GetParameterEntity, (void *ctx, const xmlChar *name), (ctx, name)) \
    F(const htmlEntityDesc *, htmlEntityLookup, (const xmlChar *name), (name))

CLIBRARY_DEFINE(LIBXML2_FUNCTIONS, "libxml2.so.2", "XML feeds need libxml2: apt-get install libxml2")

char *clibxml2_load(void) { return clibrary_load_error(&library); }
char *clibxml2_probe(const char *soname) { return clibrary_probe(soname, library.missing); }
