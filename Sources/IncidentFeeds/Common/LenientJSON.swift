import Foundation

/// A JSON scalar read as text whatever its JSON type: Korean APIs send the same field as
/// `"127.4226"` in one response and `127.4226` in another. `null` and `""` read as nil;
/// surrounding whitespace is trimmed. A value longer than ``maxBytes`` is an error, as a text
/// node over the XML reader's limit is.
public struct LenientString: Decodable, Equatable, Sendable {
    public var value: String?
    public static let maxBytes = 1 << 20

    public init(_ value: String?) { self.value = value }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            value = nil
        } else if let text = try? container.decode(String.self) {
            guard text.utf8.count <= Self.maxBytes else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "a value longer than 1 MiB")
            }
            let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
            value = trimmed.isEmpty ? nil : trimmed
        } else if let integer = try? container.decode(Int64.self) {
            value = String(integer)
        } else if let number = try? container.decode(Double.self) {
            value = "\(number)"
        } else if let flag = try? container.decode(Bool.self) {
            value = flag ? "true" : "false"
        } else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "expected a text or a number")
        }
    }
}

extension KeyedDecodingContainer {
    /// The field as text, nil when absent, null or empty.
    func lenient(_ key: Key) throws -> String? {
        try decodeIfPresent(LenientString.self, forKey: key)?.value
    }
}

/// A list that a provider may send as an array, a single object, `{"item": [...]}`,
/// `{"item": {...}}`, an empty string or null (all seen from Korean public APIs: the single
/// object when there is one record, `""` when there are none).
public struct OneOrMany<Element: Decodable>: Decodable {
    public var elements: [Element]

    private enum WrapperKey: String, CodingKey { case item }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        // Find the shape first, then decode it without `try?`, so that an error inside a record
        // (a bad value) is reported as itself, not as "not a list".
        if container.decodeNil() {
            elements = []
        } else if (try? decoder.unkeyedContainer()) != nil {
            elements = try container.decode([Element].self)
        } else if let text = try? container.decode(String.self) {
            guard text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "expected a list of records, found the text '\(text.prefix(40))'")
            }
            elements = []
        } else if let wrapper = try? decoder.container(keyedBy: WrapperKey.self), wrapper.contains(.item) {
            elements = try wrapper.decode(OneOrMany<Element>.self, forKey: .item).elements
        } else {
            elements = [try container.decode(Element.self)]
        }
    }
}
