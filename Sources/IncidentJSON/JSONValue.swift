/// One JSON value as an owned tree: what `JSONRecordReader` hands over for each record and each
/// envelope value.
///
/// Shapes follow RFC 8259 §3–§7, with two choices that keep the document's own information:
/// - `number` keeps the number's text exactly as written (`"0"`, `"-104.82129999999998"`,
///   `"1E+2"`): nothing is rounded through `Double`, and `0` and `"0"` stay distinguishable.
/// - `object` keeps every member in document order, duplicates included. The reader reports
///   duplicate keys as record problems (`JSONRecord.problems`); `subscript(key:)` returns nil for a
///   key that occurs more than once, so no caller silently gets the first or the last.
///
/// Strings are Unicode text (escapes decoded; raw control characters and invalid UTF-8 already
/// repaired by the reader, see `JSONRepairs`); `\u0000` decodes to U+0000.
public enum JSONValue: Sendable, Equatable, CustomStringConvertible {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// The number's text exactly as written in the document (RFC 8259 §6 grammar): `0`, `-1.50`,
    /// `1E+2`. Convert it where the meaning is known (`Double(text)`, `Int(text)`).
    case number(String)
    /// A string, escapes decoded.
    case string(String)
    /// An array's elements in order.
    case array([JSONValue])
    /// An object's members in document order, duplicates included.
    case object([(key: String, value: JSONValue)])

    /// Structural equality: same case, same text for numbers (so `1.0 != 1`), same members in
    /// the same order for objects.
    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case let (.bool(a), .bool(b)): return a == b
        case let (.number(a), .number(b)): return a == b
        case let (.string(a), .string(b)): return a == b
        case let (.array(a), .array(b)): return a == b
        case let (.object(a), .object(b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        default: return false
        }
    }

    /// The value of member `key` of an object, when the key occurs exactly once; nil when this
    /// is not an object, the key is absent, or it occurs more than once (see `values(forKey:)`).
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        var found: JSONValue?
        for member in members where member.key == key {
            if found != nil { return nil }
            found = member.value
        }
        return found
    }

    /// Element `index` (0-based) of an array; nil when this is not an array or out of range.
    public subscript(index: Int) -> JSONValue? {
        guard case .array(let elements) = self, elements.indices.contains(index) else { return nil }
        return elements[index]
    }

    /// Every value of member `key` of an object, in document order (empty when absent or not an
    /// object); more than one when the key is duplicated.
    public func values(forKey key: String) -> [JSONValue] {
        guard case .object(let members) = self else { return [] }
        return members.compactMap { $0.key == key ? $0.value : nil }
    }

    /// The text of a string, or of a number exactly as written; nil for anything else. For
    /// fields that providers send either way (ITS `resultCode` is `0`, `"0"` or `"00"`).
    public var scalarText: String? {
        switch self {
        case .string(let text), .number(let text): return text
        default: return nil
        }
    }

    /// The string's text; nil when this is not a string.
    public var string: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    /// The number's text as written; nil when this is not a number.
    public var number: String? {
        if case .number(let text) = self { return text }
        return nil
    }

    /// The Boolean; nil when this is not `true` or `false`.
    public var bool: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The elements; nil when this is not an array.
    public var array: [JSONValue]? {
        if case .array(let elements) = self { return elements }
        return nil
    }

    /// The members in document order; nil when this is not an object.
    public var object: [(key: String, value: JSONValue)]? {
        if case .object(let members) = self { return members }
        return nil
    }

    /// True for `null`.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// Compact JSON text of the value (RFC 8259): members in their order, numbers as written,
    /// strings escaped (`"`, `\`, and U+0000–U+001F; everything else raw UTF-8).
    public var description: String {
        var out = ""
        write(to: &out)
        return out
    }

    private func write(to out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let value): out += value ? "true" : "false"
        case .number(let text): out += text
        case .string(let text): JSONString.append(text, to: &out, style: .compact)
        case .array(let elements):
            out += "["
            for (i, element) in elements.enumerated() {
                if i > 0 { out += "," }
                element.write(to: &out)
            }
            out += "]"
        case .object(let members):
            out += "{"
            for (i, member) in members.enumerated() {
                if i > 0 { out += "," }
                JSONString.append(member.key, to: &out, style: .compact)
                out += ":"
                member.value.write(to: &out)
            }
            out += "}"
        }
    }
}
