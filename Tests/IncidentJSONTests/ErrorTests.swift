import Foundation
import IncidentJSON
import Testing
import TestSupport

/// Documents that cannot be parsed: each is rejected with its real cause and position.
@Suite struct ErrorTests {
    struct Bad: CustomTestStringConvertible, Sendable {
        var bytes: [UInt8]
        var kind: JSONParseError.Kind
        var offset: Int
        var line: Int
        var column: Int
        var message: String
        init(_ text: String, _ kind: JSONParseError.Kind, _ offset: Int, _ line: Int, _ column: Int, _ message: String) {
            self.init(Array(text.utf8), kind, offset, line, column, message)
        }
        init(_ bytes: [UInt8], _ kind: JSONParseError.Kind, _ offset: Int, _ line: Int, _ column: Int, _ message: String) {
            self.bytes = bytes
            self.kind = kind
            self.offset = offset
            self.line = line
            self.column = column
            self.message = message
        }
        var testDescription: String { String(decoding: bytes, as: UTF8.self).debugDescription }
    }

    static let trailing = "a JSON text is exactly one value (RFC 8259 §2)"
    static let unexpectedHere = "here (a value, key or bracket is missing or extra)"
    static let utf16 = "it looks like UTF-16 or UTF-32; JSON must be UTF-8 (RFC 8259 §8.1)"

    static let cases: [Bad] = [
        // Empty and truncated.
        Bad("", .truncated, 0, 1, 1, "the document is empty: no JSON value"),
        Bad("  \n ", .truncated, 4, 2, 2, "the document is empty: no JSON value"),
        Bad([0xEF, 0xBB, 0xBF], .truncated, 3, 1, 4, "the document is empty: no JSON value"),
        Bad("[1,2", .truncated, 4, 1, 5, "the document ended with an object or array still open: it is truncated"),
        Bad(#"{"a":[{}"#, .truncated, 8, 1, 9, "the document ended with 2 objects or arrays still open: it is truncated"),
        Bad(#"{"a":"abc"#, .truncated, 9, 1, 10, "the document ended inside a string that starts at byte 5"),
        Bad(#"["\"#, .truncated, 3, 1, 4, "the document ended inside a string that starts at byte 1"),
        // Data after the value.
        Bad("[1] x", .malformed, 4, 1, 5, "data after the end of the JSON value ('x'): \(trailing)"),
        Bad("{} {}", .malformed, 3, 1, 4, "data after the end of the JSON value ('{'): \(trailing)"),
        Bad("1 2", .malformed, 2, 1, 3, "data after the end of the JSON value ('2'): \(trailing)"),
        Bad("[1,2]]", .malformed, 5, 1, 6, "data after the end of the JSON value (']'): \(trailing)"),
        // Bytes that cannot appear outside strings.
        Bad("{'a':1}", .malformed, 1, 1, 2, "a single quote outside a string: JSON strings use double quotes (RFC 8259 §7)"),
        Bad("// c\n[]", .malformed, 0, 1, 1, "'/' outside a string: comments are not allowed in JSON (RFC 8259)"),
        Bad("[1, /* c */ 2]", .malformed, 4, 1, 5, "'/' outside a string: comments are not allowed in JSON (RFC 8259)"),
        Bad("[NaN]", .malformed, 1, 1, 2, "'N' outside a string: NaN and Infinity are not JSON numbers (RFC 8259 §6)"),
        Bad("[-Infinity]", .malformed, 2, 1, 3, "'I' outside a string: NaN and Infinity are not JSON numbers (RFC 8259 §6)"),
        Bad("[truex]", .malformed, 5, 1, 6, "'x' is not allowed outside a string"),
        Bad([0x5B, 0x31, 0x2C, 0x00, 0x5D], .malformed, 3, 1, 4, "a NUL byte (0x00) is not allowed outside a string"),
        Bad("[1,\u{0B}2]", .malformed, 3, 1, 4, "a control character (0x0b) outside a string: JSON whitespace is only space, tab, LF and CR (RFC 8259 §2)"),
        Bad("[1,\u{A0}2]", .malformed, 3, 1, 4, "a non-ASCII byte (0xc2) outside a string: outside strings JSON is ASCII (RFC 8259 §2)"),
        // Not UTF-8.
        Bad([0xFF, 0xFE, 0x5B, 0x00, 0x5D, 0x00], .encoding, 0, 1, 1, "the document starts with byte 0xff, a UTF-16 or UTF-32 byte order mark; JSON must be UTF-8 (RFC 8259 §8.1)"),
        Bad([0xFE, 0xFF, 0x00, 0x5B], .encoding, 0, 1, 1, "the document starts with byte 0xfe, a UTF-16 or UTF-32 byte order mark; JSON must be UTF-8 (RFC 8259 §8.1)"),
        Bad([0x00, 0x5B, 0x00, 0x5D], .encoding, 0, 1, 1, "a NUL byte at byte 0, the start of the document: \(utf16)"),
        Bad([0x5B, 0x00, 0x5D, 0x00], .encoding, 1, 1, 2, "a NUL byte at byte 1, the start of the document: \(utf16)"),
        Bad([0xEF, 0xBB, 0x5B, 0x5D], .encoding, 2, 1, 3, "the document starts with a broken UTF-8 byte order mark (EF BB BF expected)"),
        Bad([0xEF], .encoding, 1, 1, 2, "the document starts with a broken UTF-8 byte order mark (EF BB BF expected)"),
        // Tokens.
        Bad("[tru]", .malformed, 4, 1, 5, "an invalid literal: expected true, false or null"),
        Bad("[fals", .malformed, 5, 1, 6, "an invalid literal: expected true, false or null"),
        Bad("nul", .malformed, 3, 1, 4, "an invalid literal: expected true, false or null"),
        Bad(#"["\x"]"#, .malformed, 3, 1, 4, "inside a string, '\\' occurs before a character which it may not"),
        Bad(#"["\u12G4"]"#, .malformed, 6, 1, 7, "invalid (non-hex) character occurs after '\\u' inside string"),
        Bad("[01]", .malformed, 1, 1, 2, "a number with a leading zero: RFC 8259 §6 allows none"),
        Bad("[-007]", .malformed, 1, 1, 2, "a number with a leading zero: RFC 8259 §6 allows none"),
        Bad("[-]", .malformed, 2, 1, 3, "malformed number, a digit is required after the minus sign"),
        Bad("[1.]", .malformed, 3, 1, 4, "malformed number, a digit is required after the decimal point"),
        Bad("[1e]", .malformed, 3, 1, 4, "malformed number, a digit is required after the exponent"),
        // Grammar.
        Bad("[1,]", .malformed, 3, 1, 4, "unexpected ']' \(unexpectedHere)"),
        Bad(#"["a",,]"#, .malformed, 5, 1, 6, "unexpected ',' \(unexpectedHere)"),
        Bad(#"{"a":}"#, .malformed, 5, 1, 6, "unexpected '}' \(unexpectedHere)"),
        Bad("]", .malformed, 0, 1, 1, "unexpected ']' \(unexpectedHere)"),
        Bad("[}", .malformed, 1, 1, 2, "unexpected '}' \(unexpectedHere)"),
        Bad(#"{"a" 1}"#, .malformed, 5, 1, 6, "object key and value must be separated by a colon (':')"),
        Bad(#"{"a"}"#, .malformed, 4, 1, 5, "object key and value must be separated by a colon (':')"),
        Bad(#"{"a":1,}"#, .malformed, 7, 1, 8, "invalid object key (must be a string)"),
        Bad("{1:2}", .malformed, 1, 1, 2, "invalid object key (must be a string)"),
        Bad("[1 2]", .malformed, 3, 1, 4, "after array element, I expect ',' or ']'"),
        Bad(#"{"a":1 "b":2}"#, .malformed, 8, 1, 9, "after key and value, inside map, I expect ',' or '}'"),
        Bad("{\n  \"a\": [1,\n   2 3]\n}", .malformed, 18, 3, 6, "after array element, I expect ',' or ']'"),
        Bad("[\"a\nb\", x]", .malformed, 8, 2, 5, "'x' is not allowed outside a string"),
    ]

    @Test(arguments: cases)
    func rejected(_ bad: Bad) {
        let error = readError(bad.bytes, schema: rootArray)
        #expect(error == JSONParseError(kind: bad.kind, offset: bad.offset, line: bad.line, column: bad.column, message: bad.message))
    }

    @Test func descriptionIsOneLine() {
        let error = JSONParseError(kind: .malformed, offset: 9, line: 2, column: 3, message: "unexpected ']' here")
        #expect(error.description == "JSON malformed error at byte 9 (line 2, column 3): unexpected ']' here")
    }

    /// Messages quote at most one character of the document, never a value (which may be a key).
    @Test func messagesCarryNoDocumentText() {
        let secret = "SECRETKEY123"
        let documents = [
            #"{"next_url":"/e?api_key=\#(secret)" "x":1}"#,
            #"{"next_url":"/e?api_key=\#(secret)","x":tru}"#,
            #"{"next_url":"/e?api_key=\#(secret)"#,
            #"{"next_url":"/e?api_key=\#(secret)\q"}"#,
        ]
        for text in documents {
            let error = readError(text, schema: rootArray)
            #expect(error != nil)
            #expect(!(error?.description.contains(secret) ?? true), "\(error?.description ?? "")")
            #expect(!(error?.description.contains("api_key") ?? true))
        }
    }
}

/// The reader's life cycle: callbacks, errors, reuse, files.
@Suite struct ReaderTests {
    struct Stop: Error, Equatable { var position: Int }

    @Test func onRecordErrorComesOutUnchangedAndStopsTheReader() throws {
        var seen: [Int] = []
        let reader = JSONRecordReader(schema: rootArray) { record, _ in
            seen.append(record.position)
            if record.position == 2 { throw Stop(position: 2) }
        }
        #expect(throws: Stop(position: 2)) { try reader.parse(Array("[1,2,3,4]".utf8)) }
        #expect(seen == [1, 2])
        let refused = #expect(throws: JSONParseError.self) { try reader.parse(Array("5".utf8)) }
        #expect(refused?.kind == .inputRefused)
        #expect(refused?.message == "the reader stopped at an earlier error; call reset() to read another document")
        #expect(throws: JSONParseError.self) { try reader.finish() }

        reader.reset()
        seen = []
        try reader.parse(Array("[7]".utf8))
        let finished = try reader.finish()
        #expect(seen == [1])
        #expect(finished.recordCount == 1)
        let again = #expect(throws: JSONParseError.self) { try reader.parse(Array("[8]".utf8)) }
        #expect(again?.message == "the document was finished; call reset() to read another document")
    }

    @Test func parseFromInsideOnRecordIsRefused() throws {
        var inner: JSONParseError?
        var reader: JSONRecordReader?
        reader = JSONRecordReader(schema: rootArray) { _, _ in
            do { try reader?.parse(Array("[1]".utf8)) } catch let error as JSONParseError { inner = error }
        }
        try reader?.parse(Array("[1]".utf8))
        let summary = try reader?.finish()
        #expect(inner?.kind == .inputRefused)
        #expect(inner?.message == "parse or finish called from inside onRecord")
        #expect(summary?.recordCount == 1)
    }

    @Test func onRecordMayReadTheReader() throws {
        var seen: [JSONEnvelope] = []
        var reader: JSONRecordReader?
        reader = JSONRecordReader(schema: JSONRecordSchema(recordPaths: [["a", "*"]], envelopePaths: [["b"]])) { _, _ in
            if let envelope = reader?.envelope { seen.append(envelope) }
        }
        try reader?.parse(Array(#"{"b":1,"a":[1,2]}"#.utf8))
        try reader?.finish()
        #expect(seen == [JSONEnvelope(values: [.number("1")]), JSONEnvelope(values: [.number("1")])])
    }

    @Test func resetMidDocumentReadsTheNextOneCleanly() throws {
        var values: [JSONValue] = []
        let reader = JSONRecordReader(schema: JSONRecordSchema(recordPaths: [["a", "*"]], envelopePaths: [["b"]])) { record, _ in
            values.append(record.value)
        }
        try reader.parse(Array(#"{"b":1,"a":[{"x":"unfinished"#.utf8))
        #expect(reader.envelope.values == [.number("1")])
        reader.reset()
        #expect(reader.envelope.values == [nil])
        try reader.parse(Array(#"{"a":[2,3]}"#.utf8))
        let summary = try reader.finish()
        #expect(values == [.number("2"), .number("3")])
        #expect(summary.recordCount == 2)
        #expect(summary.envelope.values == [nil])
        #expect(summary.byteCount == 11)
    }

    @Test func missingFileIsAnIOError() {
        let reader = JSONRecordReader(schema: rootArray) { _, _ in }
        let error = #expect(throws: JSONParseError.self) {
            try reader.parse(contentsOf: URL(fileURLWithPath: "/nonexistent/feed.json"))
        }
        #expect(error?.kind == .io)
        #expect(error?.message == "cannot open /nonexistent/feed.json: No such file or directory")
    }

    @Test func fileReadInChunks() throws {
        let directory = try TestPaths.temporaryDirectory("json")
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("feed.json")
        try Data(#"{"features":[{"id":1},{"id":2}],"feed_info":{"publisher":"X"}}"#.utf8).write(to: file)
        var ids: [JSONValue?] = []
        let reader = JSONRecordReader(schema: Schemas.wzdx) { record, _ in ids.append(record.value["id"]) }
        let summary = try reader.parse(contentsOf: file, chunkSize: 3)
        #expect(ids == [.number("1"), .number("2")])
        #expect(summary.envelope[0] == .object([("publisher", .string("X"))]))
        #expect(summary.byteCount == 62)
    }
}
