/// Why an `XMLRecordReader` stopped: malformed or truncated XML, a limit, a refused external
/// entity, or an I/O failure.
///
/// `line` and `column` are 1-based positions in the document as libxml2 counts them (0 when
/// unknown); `message` is libxml2's own message for malformed input (from its structured error
/// callback) or the reader's message for the other kinds. Messages carry no secrets: they quote
/// at most element and entity names from the document.
///
/// Errors thrown by the `onRecord` callback are never wrapped in this type: they come out of
/// `parse`/`finish` unchanged.
public struct XMLParseError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A stable category of failure; compare with the static members.
    /// (The same pattern as `JSONParseError.Kind`; the targets share no dependency.)
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        /// A short stable name, e.g. `malformed`.
        public let name: String
        private init(_ name: String) { self.name = name }
        public var description: String { name }

        /// Not well-formed XML (libxml2's fatal or error-level diagnostics), including an
        /// undeclared namespace prefix. (Illegal characters and undeclared entities are
        /// repaired, not errors: see `XMLRecordReader`, "Repairs".)
        public static let malformed = Kind("malformed")
        /// The input ended before the root element closed (includes an empty document).
        public static let truncated = Kind("truncated")
        /// The chosen encoding (byte order mark, declaration or HTTP charset) is unknown or not
        /// a valid name, contradicts the bytes (UTF-16 declared in an 8-bit document), or the
        /// bytes are invalid in it (including a surrogate encoded in UTF-8, or a document that
        /// ends inside a multi-byte character).
        public static let encoding = Kind("encoding")
        /// A text run or captured value outside records exceeded `XMLLimits.maxTextBytes`.
        public static let textTooLarge = Kind("textTooLarge")
        /// Elements nested deeper than `XMLLimits.maxDepth`.
        public static let tooDeep = Kind("tooDeep")
        /// Unfinished markup exceeded `XMLLimits.maxMarkupBytes`.
        public static let markupTooLarge = Kind("markupTooLarge")
        /// Entity expansion exceeded `XMLLimits.maxEntityExpansionBytes`, or libxml2 detected
        /// an entity loop or amplification.
        public static let entityExpansion = Kind("entityExpansion")
        /// A reference to an external entity (`<!ENTITY x SYSTEM "…">`): never loaded.
        public static let externalEntity = Kind("externalEntity")
        /// The file could not be opened or read (`parse(contentsOf:)`).
        public static let io = Kind("io")
        /// Input after an error or after `finish()`; call `reset()` to read another document.
        public static let inputRefused = Kind("inputRefused")
    }

    /// The category of failure.
    public var kind: Kind
    /// 1-based line of the failure, 0 when unknown.
    public var line: Int
    /// 1-based column of the failure, 0 when unknown.
    public var column: Int
    /// libxml2's message (malformed input) or the reader's message (limits and the rest).
    public var message: String
    /// libxml2's error number (`xmlParserErrors`), or 0 for errors the reader raised itself.
    public var code: Int

    /// Creates an error; the reader builds these, tests may too.
    public init(kind: Kind, line: Int = 0, column: Int = 0, message: String, code: Int = 0) {
        self.kind = kind
        self.line = line
        self.column = column
        self.message = message
        self.code = code
    }

    /// `XML <kind> error at line L, column C: message`.
    public var description: String {
        "XML \(kind) error at line \(line), column \(column): \(message)"
    }
}
