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
/// Schema 0 is flat (the Korean providers'); schema 1 is DATEX II-like (namespaces, paths,
/// repeated fields, QName and context attributes) and reads undeclared documents as CP949 (an
/// HTTP charset), so the iconv path is fuzzed too.
enum FuzzInput {
    static let d2 = "http://datex2.eu/schema/2/2_0"
    static let loc = "http://datex2.eu/schema/3/locationReferencing"
    static let schemas: [XMLRecordSchema] = [
        XMLRecordSchema(
            recordElements: [XMLName("itemList"), XMLName("item"), XMLName("data")],
            fields: ["routeId", "linkId", "regSeq", "inciDesc", "coord_x", "a", "b", "message"].map { XMLName($0) },
            envelopeFields: [XMLName("headerCd"), XMLName("headerMsg"), XMLName("resultCode"), XMLName("h")],
            recordAttributes: [XMLName("id")]),
        XMLRecordSchema(
            recordElements: [XMLName("r", namespaceURI: "urn:x"), XMLName("situationRecord", namespaceURI: d2)],
            fields: [XMLField(XMLName("a", namespaceURI: "urn:x")),
                     XMLField([XMLName("values", namespaceURI: d2), XMLName("value", namespaceURI: d2)],
                              cardinality: .repeated, attributes: [XMLAttribute(XMLName("lang"))]),
                     XMLField(XMLName("b")),
                     XMLField([XMLName("validityTimeSpecification", namespaceURI: d2), XMLName("overallStartTime", namespaceURI: d2)]),
                     XMLField(XMLName("groupOfLocations", namespaceURI: d2), attributes: [.xsiType], capturesText: false),
                     XMLField([XMLName("pointCoordinates", namespaceURI: loc), XMLName("latitude", namespaceURI: loc)],
                              cardinality: .repeated)],
            envelopeFields: [XMLField(XMLName("h", namespaceURI: "urn:x")),
                             XMLField(XMLName("payloadPublication", namespaceURI: d2), attributes: [.xsiType], capturesText: false)],
            recordAttributes: [XMLAttribute(XMLName("id")), .xsiType],
            contextAttributes: [XMLContextAttribute(element: XMLName("situation", namespaceURI: d2), attribute: XMLAttribute(XMLName("id")))]),
    ]
    static let charsets: [String?] = [nil, "CP949"]
    static let tinyLimits = XMLLimits(maxTextBytes: 64, maxRecordBytes: 256, maxDepth: 8, maxMarkupBytes: 512,
                                      maxEntityExpansionBytes: 128)

    /// Whether `record` has the shape `schema` promises (what every run checks).
    static func isWellShaped(_ record: XMLRecord, _ schema: XMLRecordSchema) -> Bool {
        record.values.count == schema.fields.count
            && record.attributes.count == schema.recordAttributes.count
            && record.context.count == schema.contextAttributes.count
            && record.repairs >= 0
            && record.occurrences.allSatisfy { schema.fields.indices.contains($0.field)
                && $0.attributes.count == schema.fields[$0.field].attributes.count }
    }

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
            reader.charset = charsets[Int(control >> 7)]
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
