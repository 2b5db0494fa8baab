#if canImport(IncidentXML)
import IncidentXML
#endif

/// How one fuzz input is decoded and fed to the reader. Shared, file and all, by the libFuzzer
/// entry that Scripts/fuzz-xml builds (where it is compiled into one module with the reader's
/// sources, hence the conditional import) and by FuzzRegressionTests, so a saved crash input
/// replays exactly as it ran.
///
/// The first byte picks the chunk size (1...253), the limits (tiny limits reach every limit
/// path quickly) and the schema; the rest is the document, fed in chunks, then `finish()`.
enum FuzzInput {
    static let schemas: [XMLRecordSchema] = [
        XMLRecordSchema(
            recordElements: [XMLName("itemList"), XMLName("item"), XMLName("data")],
            fields: ["routeId", "linkId", "regSeq", "inciDesc", "coord_x", "a", "b", "message"].map { XMLName($0) },
            envelopeFields: [XMLName("headerCd"), XMLName("headerMsg"), XMLName("resultCode"), XMLName("h")],
            recordAttributes: [XMLName("id")]),
        XMLRecordSchema(
            recordElements: [XMLName("r", namespaceURI: "urn:x"), XMLName("situationRecord")],
            fields: [XMLName("a", namespaceURI: "urn:x"), XMLName("value"), XMLName("b")],
            envelopeFields: [XMLName("h", namespaceURI: "urn:x")],
            recordAttributes: [XMLName("id"), XMLName("type", namespaceURI: "http://www.w3.org/2001/XMLSchema-instance")]),
    ]
    static let tinyLimits = XMLLimits(maxTextBytes: 64, maxRecordBytes: 256, maxDepth: 8, maxMarkupBytes: 512,
                                      maxEntityExpansionBytes: 128)

    /// Runs one input; `onRecord` sees each record with the schema it was read with.
    /// - Returns: the error the reader threw, nil when the document was read to the end.
    static func run(_ input: UnsafeRawBufferPointer, onRecord: (XMLRecord, XMLRecordSchema) -> Void) -> (any Error)? {
        guard let control = input.first else { return nil }
        let chunkSize = Int(control & 0x3F) * 4 + 1
        let limits = control & 0x40 != 0 ? tinyLimits : .default
        let schema = schemas[Int(control >> 7)]
        let body = UnsafeRawBufferPointer(rebasing: input[1...])
        return withoutActuallyEscaping(onRecord) { onRecord in
            let reader = XMLRecordReader(schema: schema, limits: limits) { record, _ in onRecord(record, schema) }
            do {
                var offset = 0
                while offset < body.count {
                    let end = min(offset + chunkSize, body.count)
                    try reader.parse(UnsafeRawBufferPointer(rebasing: body[offset..<end]))
                    offset = end
                }
                try reader.finish()
                return nil
            } catch {
                return error
            }
        }
    }
}
