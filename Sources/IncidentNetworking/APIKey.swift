import Foundation

/// An API key as issued by data.go.kr-style portals, accepted in either of the forms the
/// portals hand out, and sent percent-encoded exactly once.
///
/// - "encoding" form: already percent-encoded, e.g. `abc%2Bdef%2Fghi%3D` (also a key that was
///   encoded twice, `%252B`);
/// - "decoding" form: the raw key, e.g. `abc+def/ghi=`.
///
/// Both normalize to the raw key (surrounding whitespace and newlines are dropped; `%XX`
/// escapes are decoded until none is left — raw portal keys are Base64 and never hold `%`).
/// `percentEncoded` encodes every byte outside RFC 3986 §2.3's unreserved set, so the key goes
/// on the wire as `abc%2Bdef%2Fghi%3D`: never `%252B`, never a bare `+` (which servers read as
/// a space, see DESIGN.md).
///
/// The key never reaches text: `description`, `debugDescription`, string interpolation and
/// `dump` show `REDACTED`. Creating a key registers it with `Redaction`, so it is scrubbed
/// from any text `Redaction.redact` sees, in any encoding.
public struct APIKey: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    private let raw: String

    /// Creates a key from either its encoded or its raw form (see the type's documentation).
    public init(_ text: String) {
        var value = text.trimmingCharacters(in: .whitespacesAndNewlines)
        var rounds = 0
        while rounds < 3, PercentEncoding.containsEscape(value), let decoded = value.removingPercentEncoding {
            value = decoded
            rounds += 1
        }
        raw = value
        Redaction.register(secret: value)
    }

    /// The key as it goes into a query string: RFC 3986 unreserved characters kept, every other
    /// byte `%XX` with upper-case hex (`+` → `%2B`, `/` → `%2F`, `=` → `%3D`).
    public var percentEncoded: String {
        PercentEncoding.encodeUnreserved(raw)
    }

    /// Always `REDACTED`.
    public var description: String { Redaction.placeholder }

    /// Always `APIKey(REDACTED)`.
    public var debugDescription: String { "APIKey(\(Redaction.placeholder))" }

    /// Shows `REDACTED` to `dump` and other reflection-based printers.
    public var customMirror: Mirror {
        Mirror(self, children: ["value": Redaction.placeholder], displayStyle: .struct)
    }
}
