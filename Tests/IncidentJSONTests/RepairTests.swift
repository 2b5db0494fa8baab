import IncidentJSON
import Testing

/// What the reader repairs instead of rejecting: raw control characters and invalid UTF-8 inside
/// strings, unpaired surrogate escapes, a UTF-8 byte order mark.
@Suite struct RepairTests {
    /// The one string of `["…"]`, with `content` as its raw bytes.
    private func readString(_ content: [UInt8]) throws -> (JSONValue?, JSONRepairs) {
        let result = try read(Array("[\"".utf8) + content + Array("\"]".utf8), schema: rootArray)
        return (result.records.first?.value, result.summary.repairs)
    }

    @Test func everyRawControlCharacterIsReadAsEscaped() throws {
        for byte in UInt8(0)..<0x20 {
            let (value, repairs) = try readString([0x61, byte, 0x62])
            #expect(value == .string("a\(Character(Unicode.Scalar(byte)))b"), "byte \(byte)")
            #expect(repairs == JSONRepairs(controlCharacters: 1))
        }
        // DEL and C1 controls are allowed by RFC 8259 and left alone.
        let (value, repairs) = try readString([0x7F, 0xC2, 0x85])
        #expect(value == .string("\u{7F}\u{85}"))
        #expect(repairs == JSONRepairs())
    }

    @Test func controlCharactersInKeysAndCounts() throws {
        let result = try read("[{\"a\tb\":\"x\r\ny\"}]", schema: rootArray)
        #expect(result.records[0].value == .object([("a\tb", .string("x\r\ny"))]))
        #expect(result.summary.repairs.controlCharacters == 3)
        #expect(result.summary.repairs.total == 3)
    }

    /// Each ill-formed sequence becomes U+FFFD per maximal subpart, the same text Swift's own
    /// UTF-8 decoder makes of the bytes.
    @Test(arguments: [
        ([0x61, 0xFF, 0x62], 1),                  // a byte that never occurs in UTF-8
        ([0xC0, 0xAF], 2),                        // overlong '/'
        ([0xE0, 0x80, 0xAF], 3),                  // overlong, 3 bytes
        ([0xED, 0xA0, 0x80], 3),                  // an encoded surrogate (U+D800)
        ([0xF4, 0x90, 0x80, 0x80], 4),            // above U+10FFFF
        ([0xF5, 0x41], 1),
        ([0x80, 0xBF], 2),                        // stray continuation bytes
        ([0xE4, 0xB8], 1),                        // cut by the closing quote
        ([0xE4, 0xB8, 0x41], 1),                  // cut by an ASCII letter
        ([0xF0, 0x9F, 0x98, 0x09], 1),            // cut by a TAB (which is then escaped)
        ([0xE4, 0xB8, 0xAD, 0xF0, 0x9F, 0x98, 0x80], 0),  // valid: 中😀
    ] as [([UInt8], Int)])
    func invalidUTF8(bytes: [UInt8], replacements: Int) throws {
        let (value, repairs) = try readString(bytes)
        #expect(value == .string(String(decoding: bytes, as: UTF8.self)))
        #expect(repairs.invalidUTF8 == replacements)
        #expect(value?.string?.unicodeScalars.filter { $0 == "\u{FFFD}" }.count == replacements)
    }

    /// yajl 2.1 would turn these into invalid UTF-8 (or drop the byte after a lone high half).
    @Test(arguments: [
        (#"\uD800"#, "\u{FFFD}", 1),
        (#"\uD800x"#, "\u{FFFD}x", 1),
        (#"\uDC00"#, "\u{FFFD}", 1),
        (#"\uD800\u0041"#, "\u{FFFD}A", 1),
        (#"\uD800\n"#, "\u{FFFD}\n", 1),
        (#"\uD800\uD800\uDC00"#, "\u{FFFD}\u{10000}", 1),
        (#"\uDC00\uD800"#, "\u{FFFD}\u{FFFD}", 2),
        (#"\uD83D\uDE00"#, "😀", 0),
        (#"\udbff\udfff"#, "\u{10FFFF}", 0),
        (#"\u0000"#, "\u{0}", 0),
        (#"\uFFFD"#, "\u{FFFD}", 0),
    ])
    func unpairedSurrogateEscapes(escaped: String, expected: String, replacements: Int) throws {
        let (value, repairs) = try readString(Array(escaped.utf8))
        #expect(value == .string(expected))
        #expect(repairs.unpairedSurrogates == replacements)
    }

    @Test func surrogatesInKeys() throws {
        let result = try read(#"[{"\uD800":1,"\ud83d\ude00":2}]"#, schema: rootArray)
        #expect(result.records[0].value == .object([("\u{FFFD}", .number("1")), ("😀", .number("2"))]))
        #expect(result.summary.repairs == JSONRepairs(unpairedSurrogates: 1))
    }

    @Test func byteOrderMark() throws {
        let result = try read([0xEF, 0xBB, 0xBF] + Array(#"[{"a":1}]"#.utf8), schema: rootArray)
        #expect(result.records.map(\.value) == [.object([("a", .number("1"))])])
        #expect(result.summary.byteOrderMark)
        #expect(result.summary.byteCount == 12)
        let plain = try read(#"[{"a":1}]"#, schema: rootArray)
        #expect(!plain.summary.byteOrderMark)
        // Only at the start: elsewhere it is a non-ASCII byte outside a string.
        let error = readError([0x5B, 0xEF, 0xBB, 0xBF, 0x5D], schema: rootArray)
        #expect(error == JSONParseError(kind: .malformed, offset: 1, line: 1, column: 2,
                                        message: "a non-ASCII byte (0xef) outside a string: outside strings JSON is ASCII (RFC 8259 §2)"))
    }

    @Test func repairsDoNotMoveErrorPositions() {
        // 3 repairs before the error (each longer in the output than in the document).
        let bytes = Array("[\"\t\u{1}".utf8) + [0xFF] + Array("\",\n \"ok\" 1]".utf8)
        let error = readError(bytes, schema: rootArray)
        #expect(error == JSONParseError(kind: .malformed, offset: 14, line: 2, column: 7,
                                        message: "after array element, I expect ',' or ']'"))
    }
}
