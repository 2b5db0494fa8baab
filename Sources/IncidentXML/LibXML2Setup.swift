internal import CLibXML2

/// Process-wide libxml2 setup, run once (Swift initializes globals exactly once, thread-safely)
/// before the first `XMLRecordReader` is created.
///
/// - `xmlInitParser()`: libxml2 requires it before parsing from several threads.
/// - An external-entity loader that refuses every URL, process-wide. The reader never asks for
///   external content (no `XML_PARSE_NOENT`, `XML_PARSE_DTDLOAD`, no `externalSubset`
///   callback, external entity references are refused in `getEntity`); this loader is the
///   second wall: whatever path inside libxml2 might still try to load `file:`, `http:` or any
///   other URL gets nothing. Other libxml2 users in the same process lose external loading too;
///   the product has none.
/// - `EUC-KR` is made an alias of `CP949` (Microsoft's superset of EUC-KR, known to glibc's
///   iconv as CP949/UHC). Korean servers often label CP949 output as EUC-KR; glibc's EUC-KR
///   decoder turns CP949-only syllables (e.g. 똠, bytes 8C 63) into C1 control characters,
///   whereas CP949 decodes them correctly and decodes valid EUC-KR identically.
let libxml2Setup: Void = {
    xmlInitParser()
    xmlSetExternalEntityLoader(refuseExternalEntity)
    _ = xmlAddEncodingAlias("CP949", "EUC-KR")
}()

/// The process-wide external entity loader: loads nothing.
private func refuseExternalEntity(
    _ url: UnsafePointer<CChar>?,
    _ publicID: UnsafePointer<CChar>?,
    _ context: xmlParserCtxtPtr?
) -> xmlParserInputPtr? {
    nil
}
