/// Why a `JSONRecordReader` stopped: a document that cannot be parsed, a limit, or an I/O failure.
///
/// `offset` is the 0-based byte offset in the document (byte order mark included) of the byte
/// where the problem shows: the offending byte for a bad byte, escape or number; a byte of the
/// offending token, at or just before its end, for a grammar error (`[1 2]`, `{"a" 1}`: where yajl
/// stopped); the first byte of a string or number that exceeds its limit; the last byte read for
/// a record over its limit; the end of the document for a truncated one. `line` and
/// `column` are 1-based (lines end at LF; the column counts bytes), 0 when unknown. `message` is
/// one line and quotes at most one character of the document, never a value, so it carries no
/// secret from the document.
///
/// Errors thrown by the `onRecord` callback are never wrapped in this type: they come out of
/// `parse`/`finish` unchanged.
public struct JSONParseError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A stable category of failure; compare with the static members.
    /// (The same pattern as `XMLParseError.Kind`; the targets share no dependency.)
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        /// A short stable name, e.g. `malformed`.
        public let name: String
        private init(_ name: String) { self.name = name }
        public var description: String { name }

        /// Not JSON (RFC 8259): a byte that cannot appear where it is, a bad escape, number or
        /// literal, a grammar error, or data after the one JSON value.
        public static let malformed = Kind("malformed")
        /// The input ended before the JSON value did, including an empty document.
        public static let truncated = Kind("truncated")
        /// Not UTF-8: UTF-16 or UTF-32 (a byte order mark or NUL bytes at the start), or a
        /// broken UTF-8 byte order mark. RFC 8259 §8.1 requires UTF-8.
        public static let encoding = Kind("encoding")
        /// Nesting deeper than `JSONLimits.maxDepth`.
        public static let tooDeep = Kind("tooDeep")
        /// A string or key longer than `JSONLimits.maxStringBytes`.
        public static let stringTooLarge = Kind("stringTooLarge")
        /// A number longer than `JSONLimits.maxNumberBytes`.
        public static let numberTooLarge = Kind("numberTooLarge")
        /// An envelope value larger than `JSONLimits.maxRecordBytes` (a record that large is
        /// delivered marked `JSONRecord.isOversized` instead).
        public static let recordTooLarge = Kind("recordTooLarge")
        /// The file could not be opened or read (`parse(contentsOf:)`).
        public static let io = Kind("io")
        /// Input after an error or after `finish()`; call `reset()` to read another document.
        public static let inputRefused = Kind("inputRefused")
    }

    /// The category of failure.
    public var kind: Kind
    /// 0-based byte offset in the document; see the type's documentation.
    public var offset: Int
    /// 1-based line of `offset`, 0 when unknown.
    public var line: Int
    /// 1-based column (in bytes) of `offset`, 0 when unknown.
    public var column: Int
    /// One line saying what is wrong, e.g. `a single quote outside a string: JSON strings use
    /// double quotes (RFC 8259 §7)`.
    public var message: String

    /// Creates an error; the reader builds these, tests may too.
    public init(kind: Kind, offset: Int = 0, line: Int = 0, column: Int = 0, message: String) {
        self.kind = kind
        self.offset = offset
        self.line = line
        self.column = column
        self.message = message
    }

    /// `JSON <kind> error at byte N (line L, column C): message`.
    public var description: String {
        "JSON \(kind) error at byte \(offset) (line \(line), column \(column)): \(message)"
    }
}
