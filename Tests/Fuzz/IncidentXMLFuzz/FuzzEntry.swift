// libFuzzer entry for IncidentXML's record reader; built by Scripts/fuzz-xml together with
// Sources/IncidentXML/*.swift into one module (not part of the package's targets).
//
// Each input is one document. The first byte picks the chunk size (1...256) and the limits
// (tiny limits reach every limit path quickly); the rest is fed in chunks, then finish().
// Any outcome other than records + success or an XMLParseError is a bug: libFuzzer reports
// crashes, and a non-XMLParseError error traps here.

private let schemas: [XMLRecordSchema] = [
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

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data, size > 0 else { return 0 }
    let control = data[0]
    let chunkSize = Int(control & 0x3F) * 4 + 1
    let limits = control & 0x40 != 0
        ? XMLLimits(maxTextBytes: 64, maxRecordBytes: 256, maxDepth: 8, maxMarkupBytes: 512, maxEntityExpansionBytes: 128)
        : XMLLimits.default
    let schema = schemas[Int(control >> 7)]
    var records = 0
    let reader = XMLRecordReader(schema: schema, limits: limits) { record, _ in
        records += 1
        precondition(record.values.count == schema.fields.count)
    }
    let body = UnsafeRawBufferPointer(start: data + 1, count: size - 1)
    do {
        var offset = 0
        while offset < body.count {
            let end = min(offset + chunkSize, body.count)
            try reader.parse(UnsafeRawBufferPointer(rebasing: body[offset..<end]))
            offset = end
        }
        try reader.finish()
    } catch is XMLParseError {
        // Expected for malformed or hostile input.
    } catch {
        fatalError("unexpected error type: \(error)")
    }
    return 0
}
