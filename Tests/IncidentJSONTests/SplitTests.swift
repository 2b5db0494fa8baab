import IncidentJSON
import Testing

/// Chunks of any size, split anywhere (inside a UTF-8 sequence, an escape, a number, a literal,
/// the byte order mark, a repair), give exactly the records, summary or error of the whole.
@Suite struct SplitTests {
    static let schema = JSONRecordSchema(
        recordPaths: [["body", "items", "*"], ["events", "*"], ["*"]],
        envelopePaths: [["header", "resultCode"], ["pagination", "next_url"], ["k\tey"]])
    static let small = JSONLimits(maxDepth: 4, maxStringBytes: 12, maxNumberBytes: 6, maxRecordBytes: 200)

    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var bytes: [UInt8]
        var limits = JSONLimits.default
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "ITS envelope, Korean, wrapper, escapes, numbers",
             bytes: Array(#"{"header":{"resultCode":"00"},"body":{"items":{"item":[{"id":"돌발","n":-0.5e+10,"z":0,"e":1E2,"t":true,"f":false,"x":null},{"s":"\u00e9\ud83d\ude00\n\/","a":[[],{}]}]}}}"#.utf8)),
        Case(name: "repairs: raw TAB/LF/NUL, invalid UTF-8, unpaired surrogates, BOM",
             bytes: [0xEF, 0xBB, 0xBF] + Array("[\"a\tb\nc\u{0}\",\"".utf8) + [0xF0, 0x9F, 0x98, 0x22, 0x2C, 0x22, 0xC0, 0xED, 0xA0, 0x80, 0xE4, 0xB8, 0xAD]
                + Array(#"","\uD800x\uDC00\uD800\u0041\uD83D\uDE00",{"k\#u{7}":"\uDBFF"}]"#.utf8)),
        Case(name: "Open511: pagination after events",
             bytes: Array(#"{"events":[{"id":"511.org/1"},{"id":"511.org/2","roads":[{"name":"I-80"}]}],"pagination":{"offset":0,"next_url":"/e?offset=2"},"k\tey":[1]}"#.utf8)),
        Case(name: "pretty-printed with CRLF", bytes: Array("{\r\n  \"events\" : [ {\r\n    \"id\" : 1 } ,\r\n {\"id\":2} ]\r\n}\r\n".utf8)),
        Case(name: "trailing garbage", bytes: Array(#"[{"a":1}] {"#.utf8)),
        Case(name: "two values", bytes: Array("[1] [2]".utf8)),
        Case(name: "unterminated string with Korean", bytes: Array(#"[{"a":"가나다"#.utf8)),
        Case(name: "unterminated object", bytes: Array(#"{"events":[{"id":1}"#.utf8)),
        Case(name: "grammar error on line 3", bytes: Array("[1,\n2,\n3 4]".utf8)),
        Case(name: "leading zero", bytes: Array("[10,01]".utf8)),
        Case(name: "bad escape after a repaired TAB", bytes: Array("[\"a\tb\\x\"]".utf8)),
        Case(name: "NUL outside a string", bytes: [0x5B, 0x31, 0x2C, 0x20, 0x00, 0x5D]),
        Case(name: "literal cut by the end", bytes: Array("[tru".utf8)),
        Case(name: "number at the very end", bytes: Array("-12.5e3".utf8)),
        Case(name: "broken byte order mark", bytes: [0xEF, 0xBB, 0x5B, 0x5D]),
        Case(name: "record error after a repair on an earlier line", bytes: Array("[\"a\nb\",\n  {\"a\" 1}]".utf8)),
        Case(name: "string over the limit", bytes: Array(#"["123456789012","1234567890123"]"#.utf8), limits: small),
        Case(name: "escaped string over the limit", bytes: Array(#"["\u0041\u0042\u0043"]"#.utf8), limits: small),
        Case(name: "number over the limit", bytes: Array("[123456,1234567]".utf8), limits: small),
        Case(name: "depth over the limit", bytes: Array("[[[[1]],[[[[2]]]]]]".utf8), limits: JSONLimits(maxDepth: 4)),
        Case(name: "record over the limit", bytes: Array(#"[{"a":"0123456789"},{"a":"0123456789","b":"0123456789","c":"0123456789","d":"0123456789"}]"#.utf8), limits: small),
    ]

    @Test(arguments: cases)
    func everySplitPoint(_ c: Case) {
        let whole = Outcome(c.bytes, schema: Self.schema, limits: c.limits, chunks: [c.bytes.count])
        for k in 0...c.bytes.count {
            let split = Outcome(c.bytes, schema: Self.schema, limits: c.limits, chunks: [k, c.bytes.count - k])
            #expect(split == whole, "split at \(k): \(split) vs \(whole)")
        }
    }

    @Test(arguments: cases)
    func chunkSizes1To64(_ c: Case) {
        let whole = Outcome(c.bytes, schema: Self.schema, limits: c.limits, chunks: [c.bytes.count])
        for size in 1...64 {
            let chunked = Outcome(c.bytes, schema: Self.schema, limits: c.limits,
                                  chunks: Array(repeating: size, count: c.bytes.count / size + 1))
            #expect(chunked == whole, "chunk size \(size): \(chunked) vs \(whole)")
        }
    }

    /// The whole-document results the split tests compare against are themselves right.
    @Test func wholeResults() throws {
        func outcome(_ name: String) -> Outcome {
            let c = Self.cases.first { $0.name == name }!
            return Outcome(c.bytes, schema: Self.schema, limits: c.limits, chunks: [c.bytes.count])
        }
        guard case .read(let its) = outcome("ITS envelope, Korean, wrapper, escapes, numbers") else {
            Issue.record("expected records"); return
        }
        #expect(its.records.map(\.value.description) == [
            #"{"id":"돌발","n":-0.5e+10,"z":0,"e":1E2,"t":true,"f":false,"x":null}"#,
            #"{"s":"é😀\n/","a":[[],{}]}"#,
        ])
        #expect(its.summary.envelope.values == [.string("00"), nil, nil])

        guard case .read(let repaired) = outcome("repairs: raw TAB/LF/NUL, invalid UTF-8, unpaired surrogates, BOM") else {
            Issue.record("expected records"); return
        }
        #expect(repaired.records.map(\.value) == [
            .string("a\tb\nc\u{0}"),
            .string("\u{FFFD}"),
            .string("\u{FFFD}\u{FFFD}\u{FFFD}\u{FFFD}中"),
            .string("\u{FFFD}x\u{FFFD}\u{FFFD}A😀"),
            .object([("k\u{7}", .string("\u{FFFD}"))]),
        ])
        #expect(repaired.summary.repairs == JSONRepairs(controlCharacters: 4, invalidUTF8: 5, unpairedSurrogates: 4))
        #expect(repaired.summary.byteOrderMark)

        guard case .read(let open511) = outcome("Open511: pagination after events") else {
            Issue.record("expected records"); return
        }
        #expect(open511.records.map(\.pathIndex) == [1, 1])
        #expect(open511.summary.envelope.values == [nil, .string("/e?offset=2"), .array([.number("1")])])

        // A record over the limit is read on and delivered marked, not the end of the document:
        // 72 + 4 × (17 + 34) = 276 bytes counted; it passed 200 at "c"'s value.
        guard case .read(let oversized) = outcome("record over the limit") else {
            Issue.record("expected records"); return
        }
        #expect(oversized.records.map(\.isOversized) == [false, true])
        #expect(oversized.records[1].value.description == #"{"a":"0123456789","b":"0123456789","c":"0123456789","d":"0123456789"}"#)
        #expect(oversized.records[1].problems == ["the record is larger than the limit of 200 bytes per record (JSONLimits.maxRecordBytes counts 276): only its members outside lists were read, to name it"])

        guard case .read(let crlf) = outcome("pretty-printed with CRLF"), case .read(let number) = outcome("number at the very end") else {
            Issue.record("expected records"); return
        }
        #expect(crlf.records.map(\.value) == [.object([("id", .number("1"))]), .object([("id", .number("2"))])])
        #expect(number.records == [JSONRecord(value: .number("-12.5e3"), position: 1, pathIndex: 2)])

        let errors: [(String, JSONParseError.Kind, Int, Int, Int, String)] = [
            ("two values", .malformed, 4, 1, 5, "data after the end of the JSON value ('['): a JSON text is exactly one value (RFC 8259 §2)"),
            ("leading zero", .malformed, 4, 1, 5, "a number with a leading zero: RFC 8259 §6 allows none"),
            ("bad escape after a repaired TAB", .malformed, 6, 1, 7, "inside a string, '\\' occurs before a character which it may not"),
            ("literal cut by the end", .malformed, 4, 1, 5, "an invalid literal: expected true, false or null"),
            ("trailing garbage", .malformed, 10, 1, 11, "data after the end of the JSON value ('{'): a JSON text is exactly one value (RFC 8259 §2)"),
            ("unterminated string with Korean", .truncated, 16, 1, 17, "the document ended inside a string that starts at byte 6"),
            ("grammar error on line 3", .malformed, 9, 3, 3, "after array element, I expect ',' or ']'"),
            ("record error after a repair on an earlier line", .malformed, 15, 3, 8, "object key and value must be separated by a colon (':')"),
            ("string over the limit", .stringTooLarge, 16, 1, 17, "a string longer than 12 bytes (JSONLimits.maxStringBytes)"),
            ("escaped string over the limit", .stringTooLarge, 1, 1, 2, "a string longer than 12 bytes (JSONLimits.maxStringBytes)"),
            ("number over the limit", .numberTooLarge, 8, 1, 9, "a number longer than 6 bytes (JSONLimits.maxNumberBytes)"),
            ("depth over the limit", .tooDeep, 10, 1, 11, "objects and arrays nested deeper than 4 (JSONLimits.maxDepth)"),
        ]
        for (name, kind, offset, line, column, message) in errors {
            #expect(outcome(name) == .failed(JSONParseError(kind: kind, offset: offset, line: line, column: column, message: message)), "\(name)")
        }
    }
}
