// libFuzzer entry for IncidentXML's record reader; built by Scripts/fuzz-xml together with
// Sources/IncidentXML/*.swift into one module (not part of the package's targets).
//
// Each input is decoded by Tests/IncidentXMLTests/FuzzInput.swift (shared with the regression
// tests). Any outcome other than records + success or an XMLParseError is a bug: libFuzzer
// reports crashes, and a non-XMLParseError error traps here.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data, size > 0 else { return 0 }
    let error = FuzzInput.run(UnsafeRawBufferPointer(start: data, count: size)) { record, schema in
        precondition(FuzzInput.isWellShaped(record, schema))
    }
    // An XMLParseError is expected for malformed or hostile input; anything else is a bug.
    if let error, !(error is XMLParseError) { fatalError("unexpected error type: \(error)") }
    return 0
}
