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
///
/// Encodings are converted before libxml2 sees the bytes (`XMLInputDecoder`), so libxml2's own
/// encoding aliases are left alone.
let libxml2Setup: Void = {
    xmlInitParser()
    xmlSetExternalEntityLoader(refuseExternalEntity)
}()

/// The process-wide external entity loader: loads nothing.
private func refuseExternalEntity(
    _ url: UnsafePointer<CChar>?,
    _ publicID: UnsafePointer<CChar>?,
    _ context: xmlParserCtxtPtr?
) -> xmlParserInputPtr? {
    nil
}
