import IncidentJSON
import Testing

/// Record and envelope paths, the lenient `*` step, and duplicates.
@Suite struct PathTests {
    static let items = JSONRecordSchema(recordPaths: [["body", "items", "*"]],
                                        envelopePaths: [["header", "resultCode"], ["body", "totalCount"]])

    private func ids(_ text: String, schema: JSONRecordSchema = PathTests.items) throws -> [String] {
        try read(text, schema: schema).records.map { $0.value["id"]?.scalarText ?? $0.value.description }
    }

    @Test func itemsAsArrayObjectEmptyStringNullEmptyContainers() throws {
        #expect(try ids(#"{"body":{"items":[{"id":"a"},{"id":"b"}]}}"#) == ["a", "b"])
        #expect(try ids(#"{"body":{"items":{"id":"a"}}}"#) == ["a"])
        for empty in [#""""#, "null", "[]", "{}"] {
            let result = try read(#"{"body":{"items":\#(empty),"totalCount":0}}"#, schema: Self.items)
            #expect(result.records.isEmpty, "items: \(empty)")
            #expect(result.summary.recordPathsFound == [1], "items: \(empty) is a page with no records")
            #expect(result.summary.envelope.values == [nil, .number("0")])
        }
        // A missing path is not an empty page.
        let missing = try read(#"{"header":{"resultCode":"4005","resultMsg":"bad key"}}"#, schema: Self.items)
        #expect(missing.records.isEmpty)
        #expect(missing.summary.recordPathsFound == [0])
        #expect(missing.summary.envelope.values == [.string("4005"), nil])
    }

    @Test func dataGoKrItemWrapper() throws {
        #expect(try ids(#"{"body":{"items":{"item":[{"id":1},{"id":2},{"id":3}]}}}"#) == ["1", "2", "3"])
        #expect(try ids(#"{"body":{"items":{"item":{"id":7}}}}"#) == ["7"])
        #expect(try ids(#"{"body":{"items":{"item":""}}}"#) == [])
        #expect(try ids(#"{"body":{"items":{"item":null,"numOfRows":10}}}"#) == [])
        // Only one level is unwrapped, and only when "item" is the first key.
        #expect(try ids(#"{"body":{"items":{"item":{"item":{"id":1}}}}}"#) == [#"{"item":{"id":1}}"#])
        #expect(try ids(#"{"body":{"items":{"id":5,"item":[1]}}}"#) == ["5"])
        let wrapped = try read(#"{"body":{"items":{"item":[{"id":1}]}}}"#, schema: Self.items)
        #expect(wrapped.summary.recordPathsFound == [1])
        // Unwrapping can be turned off.
        let plain = JSONRecordSchema(recordPaths: [["body", "items", "*"]], wrapperKey: nil)
        #expect(try ids(#"{"body":{"items":{"item":[{"id":1}]}}}"#, schema: plain) == [#"{"item":[{"id":1}]}"#])
    }

    @Test func scalarsAtAStarStepAreSingleRecords() throws {
        let result = try read(#"[1,"two",true,null,"",{"id":3},[4]]"#, schema: rootArray)
        #expect(result.records.map(\.value) == [.number("1"), .string("two"), .bool(true), .null, .string(""),
                                                .object([("id", .number("3"))]), .array([.number("4")])])
        // Array elements are records whatever they are; only the value at the step itself is lenient.
        #expect(try ids(#"{"body":{"items":"abc"}}"#) == [#""abc""#])
        #expect(try ids(#"{"body":{"items":12}}"#) == ["12"])
        let root = try read(#""just text""#, schema: rootArray)
        #expect(root.records.map(\.value) == [.string("just text")])
    }

    @Test func numbersOrStringsForTheSameField() throws {
        for (code, value) in [("0", JSONValue.number("0")), (#""0""#, .string("0")), (#""00""#, .string("00"))] {
            let result = try read(#"{"header":{"resultCode":\#(code)},"body":{"items":[]}}"#, schema: Self.items)
            #expect(result.summary.envelope[0] == value)
            #expect(result.summary.envelope[0]?.scalarText == (code == "0" ? "0" : code.replacingOccurrences(of: "\"", with: "")))
        }
    }

    @Test func rootArrayAndEnvelopeInOneSchema() throws {
        let its = Schemas.its
        let bare = try read(#"[{"id":"x"}]"#, schema: its)
        #expect(bare.records.map(\.pathIndex) == [1])
        let full = try read(#"{"header":{"resultCode":"0","resultMsg":"ok"},"body":{"totalCount":1,"items":[{"id":"y"}]}}"#, schema: its)
        #expect(full.records.map(\.pathIndex) == [0])
        #expect(full.records.map(\.value) == [.object([("id", .string("y"))])], "the root object is not a record of [*]")
        #expect(full.summary.recordPathsFound == [1, 0])
    }

    @Test func envelopeBeforeAndAfterRecordsAndWholeValues() throws {
        let schema = JSONRecordSchema(recordPaths: [["events", "*"]],
                                      envelopePaths: [["meta"], ["pagination", "next_url"], ["pagination", "offset"]])
        let result = try read(#"{"meta":{"v":[1,{"a":null}]},"events":[{"id":1},{"id":2}],"pagination":{"offset":"0","next_url":"/e?o=2"}}"#,
                              schema: schema)
        #expect(result.envelopes.map(\.values) == [[.object([("v", .array([.number("1"), .object([("a", .null)])]))]), nil, nil],
                                                   [.object([("v", .array([.number("1"), .object([("a", .null)])]))]), nil, nil]])
        #expect(result.summary.envelope.values == [.object([("v", .array([.number("1"), .object([("a", .null)])]))]),
                                                   .string("/e?o=2"), .string("0")])
    }

    @Test func recordsNestedUnderStarsAndSkippedSubtrees() throws {
        let schema = JSONRecordSchema(recordPaths: [["groups", "*", "events", "*"]], envelopePaths: [["n"]])
        let text = #"{"skip":{"events":[{"id":0}],"deep":[[[{"x":1}]]]},"groups":[{"events":[{"id":1}]},{"name":"g","events":{"id":2}},{"events":""},"text",{"other":[{"id":9}]}],"n":5}"#
        let result = try read(text, schema: schema)
        #expect(result.records.map { $0.value["id"] } == [.number("1"), .number("2")])
        #expect(result.summary.envelope.values == [.number("5")])
        #expect(result.summary.recordPathsFound == [3])
    }

    @Test func duplicateKeysInRecordsAreProblems() throws {
        let result = try read(#"[{"id":1,"a":{"b":[{"c":1,"c":2,"c":3}],"d":0,"d":0},"id":"2"},{"id":3}]"#, schema: rootArray)
        #expect(result.records[0].problems == [#"key "c" occurs 3 times in a.b[0]"#,
                                               #"key "d" occurs 2 times in a"#,
                                               #"key "id" occurs 2 times"#])
        #expect(result.records[1].problems == [])
        // Both values are kept, in order; subscript refuses to pick one.
        let first = result.records[0].value
        #expect(first["id"] == nil)
        #expect(first.values(forKey: "id") == [.number("1"), .string("2")])
        #expect(first.object?.count == 3)
    }

    @Test func duplicateKeysInObjectsWithManyKeys() throws {
        // More than 32 keys goes through the sorted path; the problems come in key order.
        var members = (0..<40).map { #""k\#($0)":\#($0)"# }
        members.insert(#""k5":"again""#, at: 30)
        members.insert(#""k39":"again""#, at: 35)
        members.insert(#""k5":"third""#, at: 2)
        let result = try read("[{" + members.joined(separator: ",") + "}]", schema: rootArray)
        #expect(result.records[0].problems == [#"key "k5" occurs 3 times"#, #"key "k39" occurs 2 times"#])
        #expect(result.records[0].value.object?.count == 43)
    }

    @Test func duplicatesOnTheWayAndInTheEnvelope() throws {
        let text = #"{"header":{"resultCode":"0"},"header":{"resultCode":"99"},"body":{"items":[{"id":1}],"items":[{"id":2}],"totalCount":{"a":1,"a":2}}}"#
        let result = try read(text, schema: Self.items)
        #expect(result.records.map { $0.value["id"] } == [.number("1"), .number("2")])
        #expect(result.summary.recordPathsFound == [2])
        #expect(result.summary.envelope.values == [nil, .object([("a", .number("1")), ("a", .number("2"))])])
        #expect(result.summary.envelope.problems == [
            "envelope path header.resultCode matched more than once; its value is left out",
            #"key "a" occurs 2 times in body.totalCount"#,
            #"key "items" occurs 2 times at body"#,
            #"key "header" occurs 2 times at $"#,
        ])
    }

    @Test func envelopeProblemsAreCapped() throws {
        let schema = JSONRecordSchema(recordPaths: [["g", "*", "events", "*"]])
        let group = #"{"events":[],"events":[]}"#
        let result = try read("{\"g\":[" + Array(repeating: group, count: 250).joined(separator: ",") + "]}", schema: schema)
        #expect(result.summary.envelope.problems.count == 101)
        #expect(result.summary.envelope.problems[0] == #"key "events" occurs 2 times at g[0]"#)
        #expect(result.summary.envelope.problems[99] == #"key "events" occurs 2 times at g[99]"#)
        #expect(result.summary.envelope.problems[100] == "150 more problems left out")
    }

    @Test func keysWithEscapesMatchDecoded() throws {
        let schema = JSONRecordSchema(recordPaths: [["da\u{00E9}ta", "*"]], envelopePaths: [["a\"b"]])
        let result = try read(#"{"a\"b":1,"da\u00e9ta":[{"k\u0041":"\u00e9\ud83d\ude00"}]}"#, schema: schema)
        #expect(result.records.map(\.value) == [.object([("kA", .string("é😀"))])])
        #expect(result.summary.envelope.values == [.number("1")])
    }

    @Test func pathDescriptionsAndLiterals() {
        let path: JSONPath = ["body", "items", "*"]
        #expect(path.steps == [.key("body"), .key("items"), .anyElement])
        #expect(path.description == "body.items[*]")
        #expect((["*"] as JSONPath).description == "[*]")
        #expect(JSONPath([.key("*")]).steps == [.key("*")])
        #expect(JSONPath([]).description == "$")
    }

    @Test func valueAccessorsAndText() {
        let value = JSONValue.object([("a", .array([.number("1.50"), .string("x\"\\\n\u{01}é")])), ("b", .bool(false)), ("c", .null)])
        #expect(value.description == #"{"a":[1.50,"x\"\\\n\u0001é"],"b":false,"c":null}"#)
        #expect(value["a"]?[0]?.number == "1.50")
        #expect(value["a"]?[1]?.string == "x\"\\\n\u{01}é")
        #expect(value["a"]?[2] == nil)
        #expect(value["b"]?.bool == false)
        #expect(value["c"]?.isNull == true)
        #expect(value["z"] == nil)
        #expect(value[0] == nil)
        #expect(value["a"]?["x"] == nil)
        #expect(JSONValue.number("0").scalarText == "0")
        #expect(JSONValue.bool(true).scalarText == nil)
        #expect(JSONValue.object([("a", .null)]) != JSONValue.object([("a", .null), ("a", .null)]))
        #expect(JSONValue.object([("a", .null), ("b", .null)]) != JSONValue.object([("b", .null), ("a", .null)]))
        #expect(JSONValue.number("1") != JSONValue.string("1"))
        #expect(JSONValue.number("1.0") != JSONValue.number("1"))
    }

    @Test func overlappingPathsTrap() async {
        await #expect(processExitsWith: .failure) {
            _ = JSONRecordSchema(recordPaths: [["events", "*"]], envelopePaths: [["events"]])
        }
        await #expect(processExitsWith: .failure) {
            _ = JSONRecordSchema(recordPaths: [["a", "*"], ["a", "*", "b"]])
        }
        await #expect(processExitsWith: .failure) {
            _ = JSONRecordSchema(recordPaths: [["a"]], envelopePaths: [["b", "*"]])
        }
    }
}
