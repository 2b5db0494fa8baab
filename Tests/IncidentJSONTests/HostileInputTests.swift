import IncidentJSON
import Testing

/// Hostile and huge input ends with the documented error or repair, after reading no more than
/// the limit plus one chunk: nothing is buffered beyond the limits (the proof of bounded memory
/// that does not depend on the machine; Scripts/bench-json measures peak RSS).
@Suite struct HostileInputTests {
    static let chunk = 64 * 1024

    /// Feeds `total` bytes made by `byte(at:)` (plus `prefix` and `suffix`) in 64 KiB chunks until
    /// the reader throws; returns the error and how many bytes were fed when it threw.
    private func stream(prefix: [UInt8], total: Int, byte: @escaping (Int) -> UInt8, suffix: [UInt8] = [],
                        schema: JSONRecordSchema = rootArray, limits: JSONLimits = .default,
                        onRecord: @escaping (JSONRecord) -> Void = { _ in }) -> (error: JSONParseError?, fed: Int, summary: JSONDocumentSummary?) {
        let reader = JSONRecordReader(schema: schema, limits: limits) { record, _ in onRecord(record) }
        var fed = 0
        do {
            try reader.parse(prefix)
            fed += prefix.count
            var produced = 0
            var buffer = [UInt8](repeating: 0, count: Self.chunk)
            while produced < total {
                let n = min(Self.chunk, total - produced)
                for k in 0..<n { buffer[k] = byte(produced + k) }
                try buffer.withUnsafeBytes { try reader.parse(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
                produced += n
                fed += n
            }
            try reader.parse(suffix)
            fed += suffix.count
            return (nil, fed, try reader.finish())
        } catch let error as JSONParseError {
            return (error, fed, nil)
        } catch {
            Issue.record("unexpected \(error)")
            return (nil, fed, nil)
        }
    }

    @Test func hundredThousandDeepArrays() {
        let (error, fed, _) = stream(prefix: [], total: 100_000, byte: { _ in UInt8(ascii: "[") })
        #expect(error == JSONParseError(kind: .tooDeep, offset: 256, line: 1, column: 257,
                                        message: "objects and arrays nested deeper than 256 (JSONLimits.maxDepth)"))
        #expect(fed == 0, "stopped inside the first chunk")
    }

    @Test func hundredThousandDeepObjects() {
        let unit = Array(#"{"a":"#.utf8)
        let (error, _, _) = stream(prefix: [], total: 100_000 * unit.count, byte: { unit[$0 % unit.count] })
        #expect(error?.kind == .tooDeep)
        #expect(error?.offset == 256 * unit.count)
    }

    @Test func depthAtTheLimitIsRead() throws {
        let text = String(repeating: "[", count: 256) + "1" + String(repeating: "]", count: 256)
        let result = try read(text, schema: rootArray)
        #expect(result.records.count == 1)
        #expect(readError("[" + text + "]", schema: rootArray)?.kind == .tooDeep)
    }

    @Test func fiftyMegabyteString() {
        let (error, fed, _) = stream(prefix: Array(#"[{"a":""#.utf8), total: 50_000_000, byte: { _ in UInt8(ascii: "x") },
                                     suffix: Array(#""}]"#.utf8))
        #expect(error == JSONParseError(kind: .stringTooLarge, offset: 6, line: 1, column: 7,
                                        message: "a string longer than 1048576 bytes (JSONLimits.maxStringBytes)"))
        #expect(fed <= 7 + (1 << 20), "fed \(fed) bytes")
    }

    @Test func stringAtTheLimitIsRead() throws {
        let limits = JSONLimits(maxStringBytes: 1000)
        let ok = try read("[\"" + String(repeating: "é", count: 500) + "\"]", schema: rootArray, limits: limits, chunkSize: 100)
        #expect(ok.records[0].value.string?.count == 500)
        // Escapes count as written: 167 × 6 bytes = 1002.
        let escaped = readError("[\"" + String(repeating: #"\u00e9"#, count: 167) + "\"]", schema: rootArray, limits: limits)
        #expect(escaped?.kind == .stringTooLarge)
        let key = readError("[{\"" + String(repeating: "k", count: 1001) + "\":1}]", schema: rootArray, limits: limits)
        #expect(key?.kind == .stringTooLarge)
        #expect(key?.offset == 2)
    }

    @Test func oneGigabyteNumberStreamed() throws {
        let (error, fed, _) = stream(prefix: Array("[1".utf8), total: 1_000_000_000, byte: { _ in UInt8(ascii: "0") })
        #expect(error == JSONParseError(kind: .numberTooLarge, offset: 1, line: 1, column: 2,
                                        message: "a number longer than 1024 bytes (JSONLimits.maxNumberBytes)"))
        #expect(fed == 2, "stopped inside the first 64 KiB chunk")
        let limits = JSONLimits(maxNumberBytes: 20)
        #expect(try read("[-1234567.89012345e+1]", schema: rootArray, limits: limits).records.map(\.value) == [.number("-1234567.89012345e+1")])
        #expect(readError("[-1234567.89012345e+12]", schema: rootArray, limits: limits)?.kind == .numberTooLarge)
    }

    @Test func endlessLiteral() {
        let (error, _, _) = stream(prefix: Array("[".utf8), total: 10_000_000, byte: { Array("true".utf8)[$0 % 4] })
        #expect(error == JSONParseError(kind: .malformed, offset: 1, line: 1, column: 2,
                                        message: "an invalid literal: expected true, false or null"))
    }

    /// A record over the limit does not end the document: it is read on with nothing more kept
    /// inside its lists (memory bounded by the limit), delivered marked, and the records after
    /// it are read as usual. 5,000,001 numbers of 25 bytes counted each, in a 72-byte array.
    @Test func recordOverItsLimitIsDeliveredMarked() {
        let unit = Array("1,".utf8)
        var records: [JSONRecord] = []
        let (error, _, summary) = stream(prefix: Array("[[".utf8), total: 10_000_000, byte: { unit[$0 % 2] },
                                         suffix: Array(#"1],{"id":"next"}]"#.utf8), limits: JSONLimits(maxRecordBytes: 1 << 20),
                                         onRecord: { records.append($0) })
        #expect(error == nil)
        #expect(summary?.recordCount == 2)
        #expect(records.map(\.isOversized) == [true, false])
        // Kept: the numbers up to the one that passed the limit (72 + 25 × 41,941 > 1 MiB).
        #expect(records.first?.value.array?.count == 41_941)
        #expect(records.first?.problems == ["the record is larger than the limit of 1048576 bytes per record (JSONLimits.maxRecordBytes counts 125000097): only its members outside lists were read, to name it"])
        #expect(records.last?.value == .object([("id", .string("next"))]))
    }

    /// After the limit, members of objects are still read wherever they come (a GeoJSON
    /// feature's `id` and `properties` after a huge `geometry`), lists are not, and what is kept
    /// after the limit is capped too.
    @Test func oversizedRecordKeepsItsMembersOutsideLists() throws {
        let schema = JSONRecordSchema(recordPaths: [["features", "*"]])
        let positions = (0..<200).map { "[\($0).5,1.25]" }.joined(separator: ",")
        let feature = #"{"type":"Feature","geometry":{"type":"LineString","coordinates":["# + positions
            + #"]},"properties":{"road_event_id":"r-1","road_names":["I-80"],"core_details":{"event_type":"work-zone","lanes":[{"order":1}]}},"id":"wz-9"}"#
        let result = try read(#"{"features":["# + feature + "]}", schema: schema, limits: JSONLimits(maxRecordBytes: 2_000))
        let record = try #require(result.records.first)
        #expect(record.isOversized)
        #expect(record.value["id"] == .string("wz-9"))
        #expect(record.value["type"] == .string("Feature"))
        #expect(record.value["properties"]?.description == #"{"road_event_id":"r-1","core_details":{"event_type":"work-zone"}}"#)
        #expect(record.value["geometry"]?["type"] == .string("LineString"))
        let kept = try #require(record.value["geometry"]?["coordinates"]?.array?.count)
        #expect(kept > 0 && kept < 200)

        // A record of a million members after the limit keeps at most 64 KiB more.
        let members = (0..<100_000).map { #""k\#($0)":"v""# }.joined(separator: ",")
        let many = try read(#"{"features":[{"a":"# + "\"" + String(repeating: "x", count: 900) + "\"," + members + #","id":"last"}]}"#,
                            schema: schema, limits: JSONLimits(maxRecordBytes: 1_000))
        let big = try #require(many.records.first)
        #expect(big.isOversized)
        #expect(big.value.object.map { $0.count } ?? 0 < (64 << 10) / 40)
        #expect(big.value["id"] == nil, "past the allowance nothing more is kept")
    }

    @Test func envelopeValueOverTheLimit() {
        let schema = JSONRecordSchema(recordPaths: [["features", "*"]], envelopePaths: [["feed_info"]])
        let error = readError(#"{"feed_info":{"a":"0123456789","b":"0123456789"}}"#, schema: schema,
                              limits: JSONLimits(maxRecordBytes: 20))
        #expect(error?.kind == .recordTooLarge)
        #expect(error?.message == "the envelope value feed_info is larger than 20 bytes (JSONLimits.maxRecordBytes)")
    }

    /// The document as a whole has no limit: skipped parts are not kept, records are handed over
    /// one at a time, envelope values after them are still found.
    @Test func largeDocumentWithSkippedPartsAndManyRecords() {
        let schema = JSONRecordSchema(recordPaths: [["events", "*"]], envelopePaths: [["n"]])
        let skipped = Array(#"[1.5,"skipped",{"k":[true]}],"#.utf8)
        let middle = Array(#"0],"events":["#.utf8)
        let record = Array(#"{"id":7,"s":"x\#ty"},"#.utf8)
        let skippedBytes = skipped.count * 200_000
        let recordBytes = record.count * 200_000
        var count = 0
        var last: JSONRecord?
        let (error, fed, summary) = stream(
            prefix: Array(#"{"meta":["#.utf8), total: skippedBytes + middle.count + recordBytes,
            byte: { i in
                if i < skippedBytes { return skipped[i % skipped.count] }
                if i < skippedBytes + middle.count { return middle[i - skippedBytes] }
                return record[(i - skippedBytes - middle.count) % record.count]
            },
            suffix: Array(#"{"id":8}],"n":1}"#.utf8), schema: schema, onRecord: { count += 1; last = $0 })
        #expect(error == nil)
        #expect(count == 200_001)
        #expect(last == JSONRecord(value: .object([("id", .number("8"))]), position: 200_001))
        #expect(summary?.recordCount == 200_001)
        #expect(summary?.recordPathsFound == [1])
        #expect(summary?.envelope.values == [.number("1")])
        #expect(summary?.repairs == JSONRepairs(controlCharacters: 200_000))
        #expect(summary?.byteCount == fed)
        #expect(fed == 9 + skippedBytes + middle.count + recordBytes + 16)
    }

    @Test func unterminatedLargeDocument() {
        let record = Array(#"{"a":1},"#.utf8)
        var count = 0
        let (error, fed, _) = stream(prefix: Array("[".utf8), total: record.count * 100_000, byte: { record[$0 % record.count] },
                                     onRecord: { _ in count += 1 })
        #expect(error == JSONParseError(kind: .truncated, offset: fed, line: 1, column: fed + 1,
                                        message: "the document ended with an object or array still open: it is truncated"))
        #expect(count == 100_000, "records before the end were delivered")
    }

    @Test func trailingGarbageAfterALargeDocument() {
        let record = Array(#"{"a":1},"#.utf8)
        let (error, _, _) = stream(prefix: Array("[".utf8), total: record.count * 10_000, byte: { record[$0 % record.count] },
                                   suffix: Array("{}] <html>".utf8))
        #expect(error == JSONParseError(kind: .malformed, offset: 1 + record.count * 10_000 + 4, line: 1, column: 2 + record.count * 10_000 + 4,
                                        message: "data after the end of the JSON value ('<'): a JSON text is exactly one value (RFC 8259 §2)"))
    }

    @Test func nulBytesInsideStringsAreRepaired() {
        let (error, _, summary) = stream(prefix: Array("[\"".utf8), total: 500_000, byte: { _ in 0 }, suffix: Array("\"]".utf8))
        #expect(error == nil)
        #expect(summary?.repairs == JSONRepairs(controlCharacters: 500_000))
    }

    @Test func invalidUTF8IsRepairedNotRejected() {
        var value: JSONValue?
        let (error, _, summary) = stream(prefix: Array("[\"".utf8), total: 300_000, byte: { [0xFF, 0xC3, 0x28][$0 % 3] },
                                         suffix: Array("\"]".utf8), onRecord: { value = $0.value })
        #expect(error == nil)
        // 0xFF, and 0xC3 cut by '(': two replacements per 3 bytes.
        #expect(summary?.repairs == JSONRepairs(invalidUTF8: 200_000))
        #expect(value?.string == String(repeating: "\u{FFFD}\u{FFFD}(", count: 100_000))
    }
}
