/// A path from the document's root value to the values it names: object keys and `*` (every
/// element of an array).
///
/// Written as an array literal of strings: `["body", "items", "*"]`, `["features", "*"]`, `["*"]`
/// (the elements of a root array), `["pagination", "next_url"]`. The string `"*"` is `anyElement`;
/// a key literally named `*` is written `JSONPath([.key("*")])`.
///
/// A `*` step is lenient, for the quirks of Korean public APIs (ITS `eventInfo`, data.go.kr):
/// - an array: each element, in order;
/// - an object whose first key is the schema's `wrapperKey` (default `item`, data.go.kr's
///   `{"items": {"item": [...]}}`): the step applies to that member's value instead (once; later
///   members of the wrapper are ignored);
/// - any other non-empty object or scalar: that one value (ITS sends one record as an object,
///   not an array of one);
/// - `[]`, `{}`, `""` and `null`: nothing (ITS sends `"items": ""` when there are none).
/// An object is taken as a single element only when no other path of the schema continues into
/// it by key, so `["*"]` (a root array) and `["body", "items", "*"]` can share one schema.
public struct JSONPath: Hashable, Sendable, ExpressibleByArrayLiteral, CustomStringConvertible {
    /// One step of a path.
    public enum Step: Hashable, Sendable {
        /// The member with this key (compared byte for byte as UTF-8, after escapes are decoded).
        case key(String)
        /// Every element of an array, leniently; see `JSONPath`.
        case anyElement
    }

    /// The steps from the root value.
    public var steps: [Step]

    /// Creates a path from its steps.
    public init(_ steps: [Step]) { self.steps = steps }

    /// `"*"` is `.anyElement`; every other string is a `.key`.
    public init(arrayLiteral elements: String...) {
        steps = elements.map { $0 == "*" ? .anyElement : .key($0) }
    }

    /// Dotted form, e.g. `body.items[*]`, `pagination.next_url`, `[*]`; `$` for the root.
    public var description: String {
        var out = ""
        for step in steps {
            switch step {
            case .key(let key): out += out.isEmpty ? key : "." + key
            case .anyElement: out += "[*]"
            }
        }
        return out.isEmpty ? "$" : out
    }
}

/// What a `JSONRecordReader` extracts: the paths of the records and of the envelope values.
///
/// - `recordPaths`: each value at one of these paths is one record (`["body", "items", "*"]` for
///   ITS, `["events", "*"]` for Open511, `["features", "*"]` for WZDx and GeoJSON). Records are
///   numbered in document order across all paths; `JSONRecord.pathIndex` says which matched.
/// - `envelopePaths`: values captured wherever they appear, before or after the records
///   (`["header", "resultCode"]`, `["body", "totalCount"]`, `["pagination", "next_url"]`,
///   `["feed_info"]`); `JSONEnvelope.values` is indexed like this array. Key steps only.
/// - `wrapperKey`: the key of data.go.kr's `{"item": …}` wrapper under a `*` step; nil turns
///   the unwrapping off.
///
/// Paths must not overlap: no path may be a prefix of (or equal to) another, step for step,
/// because a record or an envelope value is captured whole. Violations are programming errors
/// and trap in the initializer.
public struct JSONRecordSchema: Sendable {
    /// Paths whose values are records.
    public let recordPaths: [JSONPath]
    /// Paths whose values make up the envelope; envelope values are indexed like this array.
    public let envelopePaths: [JSONPath]
    /// The wrapper key unwrapped under a `*` step (data.go.kr `item`), or nil.
    public let wrapperKey: String?

    /// Creates a schema; see the type's documentation. Traps when a path is empty, when an
    /// envelope path contains `*`, or when two paths overlap.
    public init(recordPaths: [JSONPath], envelopePaths: [JSONPath] = [], wrapperKey: String? = "item") {
        let all = recordPaths + envelopePaths
        for path in envelopePaths {
            precondition(!path.steps.contains(.anyElement), "JSONRecordSchema: envelope path \(path) contains *")
        }
        for (i, a) in all.enumerated() {
            precondition(!a.steps.isEmpty, "JSONRecordSchema: a path must have at least one step (use [\"*\"] for a root array)")
            for b in all[(i + 1)...] {
                let n = min(a.steps.count, b.steps.count)
                precondition(a.steps.prefix(n) != b.steps.prefix(n),
                             "JSONRecordSchema: paths \(a) and \(b) overlap; a record or envelope value is captured whole")
            }
        }
        self.recordPaths = recordPaths
        self.envelopePaths = envelopePaths
        self.wrapperKey = wrapperKey
    }
}

/// One record: the value at a record path, whole, with its place in the document.
public struct JSONRecord: Sendable, Equatable {
    /// The record's value; usually an object.
    public var value: JSONValue
    /// 1-based position among all records of the document, in document order.
    public var position: Int
    /// Index into `JSONRecordSchema.recordPaths` of the path that matched.
    public var pathIndex: Int
    /// What is wrong with the record without making it unreadable, one line each, e.g.
    /// `key "id" occurs 2 times` or `key "id" occurs 2 times in properties.lanes[1]`. Empty for a
    /// clean record. The caller decides whether a problem rejects the record.
    public var problems: [String]
    /// The record was larger than `JSONLimits.maxRecordBytes`: `value` holds only what was read
    /// before the limit plus the scalar and object members of objects after it (no list after
    /// it), enough to name the record; `problems` starts with the sizes.
    public var isOversized: Bool
    /// The bytes `JSONLimits.maxRecordBytes` counted for the record (an estimate of its tree's
    /// memory): a measure of its size for callers that queue records. Not compared by `==`.
    public var byteCount = 0

    /// Records are equal when everything read is equal (`byteCount` aside).
    public static func == (a: JSONRecord, b: JSONRecord) -> Bool {
        a.value == b.value && a.position == b.position && a.pathIndex == b.pathIndex && a.problems == b.problems
            && a.isOversized == b.isOversized
    }

    /// Creates a record; the reader builds these, tests may too.
    public init(value: JSONValue, position: Int, pathIndex: Int = 0, problems: [String] = [], isOversized: Bool = false) {
        self.value = value
        self.position = position
        self.pathIndex = pathIndex
        self.problems = problems
        self.isOversized = isOversized
    }
}

/// The envelope values read so far, indexed like `JSONRecordSchema.envelopePaths`.
///
/// The envelope passed with a record holds what was read before that record ended; values that
/// come after the last record (Open511 `pagination` follows `events`) are in the summary that
/// `finish()` returns.
public struct JSONEnvelope: Sendable, Equatable {
    /// One value per envelope path: nil when not (yet) seen, or when the path matched more than
    /// once (then `problems` says so).
    public var values: [JSONValue?]
    /// Duplicates that affect the envelope or the way to the records, one line each, e.g.
    /// `envelope path header.resultCode occurs 2 times; its value is left out`,
    /// `key "body" occurs 2 times at $`, `key "a" occurs 2 times in feed_info.data_sources[0]`.
    /// At most 100, then one line `N more problems left out`.
    public var problems: [String]

    /// Creates an envelope; the reader builds these, tests may too.
    public init(values: [JSONValue?], problems: [String] = []) {
        self.values = values
        self.problems = problems
    }

    /// The value of envelope path `index`; nil when out of range, unseen or ambiguous.
    public subscript(index: Int) -> JSONValue? {
        values.indices.contains(index) ? values[index] : nil
    }
}

/// Repairs the reader made instead of rejecting the document (a product decision: only a document
/// that cannot be parsed at all is rejected). All zero for a clean RFC 8259 document.
public struct JSONRepairs: Sendable, Equatable {
    /// Raw control characters (U+0000–U+001F: TAB, LF, NUL, …) inside strings, which RFC 8259 §7
    /// forbids, read as if escaped (`\t`, `\n`, `\u0000`, …).
    public var controlCharacters: Int
    /// Ill-formed UTF-8 sequences inside strings, each replaced by one U+FFFD (maximal subparts,
    /// as in Unicode 15 §3.9 "U+FFFD Substitution of Maximal Subparts"; overlong forms, encoded
    /// surrogates and values above U+10FFFF are ill-formed).
    public var invalidUTF8: Int
    /// `\uD800`–`\uDFFF` escapes that are not a high surrogate followed directly by a low one,
    /// each replaced by U+FFFD (RFC 8259 §8.2 leaves their meaning undefined).
    public var unpairedSurrogates: Int

    /// Creates a count; the reader builds these, tests may too.
    public init(controlCharacters: Int = 0, invalidUTF8: Int = 0, unpairedSurrogates: Int = 0) {
        self.controlCharacters = controlCharacters
        self.invalidUTF8 = invalidUTF8
        self.unpairedSurrogates = unpairedSurrogates
    }

    /// The sum of all repairs.
    public var total: Int { controlCharacters + invalidUTF8 + unpairedSurrogates }
}

/// What one document held, returned by `JSONRecordReader.finish()`.
public struct JSONDocumentSummary: Sendable, Equatable {
    /// The complete envelope (values anywhere in the document).
    public var envelope: JSONEnvelope
    /// Records delivered, all paths together.
    public var recordCount: Int
    /// Records delivered per record path, indexed like `JSONRecordSchema.recordPaths`.
    public var recordCounts: [Int]
    /// Per record path: how often the value holding its records was found (the value at the path
    /// without its trailing `*`, e.g. `body.items`, even when it is `""`; or the record itself for
    /// a path without a trailing `*`). 0 means the document does not have that path at all, e.g.
    /// an error envelope instead of `body.items`: tell that apart from "no records".
    public var recordPathsFound: [Int]
    /// Per record path ending in `*`: how often that value was a JSON array. A standard whose
    /// list must be an array (WZDx `features`, Open511 `events`) tells `"features": null`, `{}`
    /// or `""` (found, but no list) from `[]` (a list with no records).
    public var recordListsAsArrays: [Int]
    /// Repairs made inside strings.
    public var repairs: JSONRepairs
    /// True when the document started with a UTF-8 byte order mark, which was skipped
    /// (RFC 8259 §8.1 lets parsers ignore it).
    public var byteOrderMark: Bool
    /// Bytes read, byte order mark included.
    public var byteCount: Int

    /// Creates a summary; the reader builds these, tests may too.
    public init(envelope: JSONEnvelope, recordCount: Int, recordCounts: [Int], recordPathsFound: [Int],
                recordListsAsArrays: [Int]? = nil, repairs: JSONRepairs = JSONRepairs(), byteOrderMark: Bool = false, byteCount: Int) {
        self.envelope = envelope
        self.recordCount = recordCount
        self.recordCounts = recordCounts
        self.recordPathsFound = recordPathsFound
        self.recordListsAsArrays = recordListsAsArrays ?? Array(repeating: 0, count: recordPathsFound.count)
        self.repairs = repairs
        self.byteOrderMark = byteOrderMark
        self.byteCount = byteCount
    }
}
