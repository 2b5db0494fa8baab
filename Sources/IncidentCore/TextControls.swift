/// The one rule for control characters in stored text, so that both stores hold the same text
/// and give the same answers (issue 24, point 6): PostgreSQL cannot store U+0000 in `text`
/// (it set the record aside) while SQLite stored it (and CSV then carried a raw NUL).
extension String {
    /// Whether `scalar` is a C0 control other than TAB, LF and CR (U+0000–U+001F): characters
    /// that no feed sends as text, which PostgreSQL (U+0000) or a terminal (ESC) cannot take.
    public static func isStrayControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 && scalar != "\t" && scalar != "\n" && scalar != "\r"
    }

    /// Whether the text holds a ``isStrayControl(_:)`` character, read from its UTF-8 bytes: a
    /// scalar below U+0020 is one byte below 0x20, and no byte of a longer sequence is (decoding
    /// the scalars cost a third of normalizing a record, issue 23).
    var hasStrayControl: Bool {
        if let found = utf8.withContiguousStorageIfAvailable(Self.hasStrayControl(utf8:)) { return found }
        return utf8.contains(where: Self.isStrayControlByte)
    }

    /// ``hasStrayControl`` over UTF-8 bytes: eight at a time while none is below 0x20 (most
    /// text has none; TAB, LF and CR are then told apart one byte at a time).
    static func hasStrayControl(utf8 bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var i = 0
        if let base = bytes.baseAddress {
            let raw = UnsafeRawPointer(base)
            // Nonzero exactly when some byte of the word is below 0x20 (bytes below 0x80 borrow-free).
            while i + 8 <= bytes.count {
                let word = raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                if (word &- 0x2020_2020_2020_2020) & ~word & 0x8080_8080_8080_8080 != 0 { break }
                i += 8
            }
        }
        while i < bytes.count {
            if isStrayControlByte(bytes[i]) { return true }
            i += 1
        }
        return false
    }

    private static func isStrayControlByte(_ byte: UInt8) -> Bool {
        byte < 0x20 && byte != 0x09 && byte != 0x0A && byte != 0x0D
    }

    /// This text with each C0 control other than TAB, LF and CR (``isStrayControl(_:)``)
    /// replaced by a space, as the terminal output does with every control character: NUL
    /// padding and separators such as FF or RS become spaces, words stay apart.
    public var replacingStrayControls: String {
        guard hasStrayControl else { return self }
        return String(String.UnicodeScalarView(unicodeScalars.map { Self.isStrayControl($0) ? " " : $0 }))
    }
}

extension Incident {
    /// The incident as both stores keep it: stray controls replaced (``Swift/String/replacingStrayControls``)
    /// in its id and every text field of `fields`, and those fields in NFC (``Swift/String/nfc``;
    /// the id is left otherwise as the provider sent it).
    public func normalizedForStorage(fields: [IncidentField] = IncidentField.content) -> Incident {
        var copy = self
        copy.externalID = externalID.replacingStrayControls
        for field in fields where field.storage == .text {
            if case .text(let text) = field.value(self), text.hasStrayControl {
                field.assign(&copy, .text(text.replacingStrayControls))
            }
        }
        return copy.normalizedToNFC(fields: fields)
    }
}

extension RejectedRecord {
    /// The record set aside as both stores keep it: stray controls replaced in every text.
    public var normalizedForStorage: RejectedRecord {
        RejectedRecord(externalID: externalID?.replacingStrayControls, position: position.replacingStrayControls,
                       reason: reason.replacingStrayControls, excerpt: excerpt?.replacingStrayControls)
    }
}

/// The words of a `--search` text, checked by one rule for both stores.
public struct SearchTerms: Sendable, Equatable {
    /// The longest text searched, in Unicode code points (SQLite bounds a LIKE pattern at
    /// 50,000 bytes: <https://www.sqlite.org/limits.html#max_like_pattern_length>).
    public static let maxCodePoints = 256

    /// The whitespace-separated words, in NFC.
    public let terms: [String]

    /// - Throws: ``QueryError`` when the text has no words, is longer than ``maxCodePoints``,
    ///   or holds a control character other than whitespace (``printable(_:what:)``).
    public init(_ text: String) throws {
        let text = try Self.printable(text, what: "search")
        let length = text.unicodeScalars.count
        guard length <= Self.maxCodePoints else {
            throw QueryError("the search text is \(length) characters long; search for at most \(Self.maxCodePoints)")
        }
        terms = text.split(whereSeparator: \.isWhitespace).map(String.init)
        guard !terms.isEmpty else { throw QueryError("the search text has no words; give at least one") }
    }

    /// Query text (`--search`, `--road`) in NFC, checked by the stores' one rule.
    /// - Throws: ``QueryError`` naming the first control character other than whitespace (C0,
    ///   DEL, C1): stored text holds no C0 control but TAB, LF and CR, SQLite's text functions
    ///   end at U+0000 and PostgreSQL's parameters cannot carry it.
    public static func printable(_ text: String, what: String) throws -> String {
        let text = text.nfc
        if let control = text.unicodeScalars.first(where: { $0.properties.generalCategory == .control && !$0.properties.isWhitespace }) {
            let hex = String(control.value, radix: 16, uppercase: true)
            throw QueryError("the \(what) text contains the control character U+\(String(repeating: "0", count: max(0, 4 - hex.count)) + hex); use printable text")
        }
        return text
    }
}
