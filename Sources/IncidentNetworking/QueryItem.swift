import Foundation

/// One `name=value` pair of a query string, built by a `Router`.
///
/// Names and values are percent-encoded by `Router.asURLRequest()` with RFC 3986 §2.3's
/// unreserved set only (space → `%20`, `&` → `%26`, `+` → `%2B`, Korean text → UTF-8 `%XX`).
/// Order is kept; a name may repeat. `description` redacts key values.
public struct QueryItem: Sendable, Hashable, CustomStringConvertible {
    enum Value: Sendable, Hashable {
        case text(String)
        case key(APIKey)
    }

    /// The parameter name, unencoded.
    public let name: String
    let value: Value

    /// A plain parameter; `value` is unencoded text.
    public static func text(_ name: String, _ value: String) -> QueryItem {
        QueryItem(name: name, value: .text(value))
    }

    /// A credential parameter: the key is sent as `key.percentEncoded`, exactly once encoded.
    /// Registers `name` with `Redaction.register(keyParameterName:)`, so its values are
    /// redacted from all text and stripped from cross-origin redirects.
    public static func key(_ name: String, _ key: APIKey) -> QueryItem {
        Redaction.register(keyParameterName: name)
        return QueryItem(name: name, value: .key(key))
    }

    /// `name=value` as it goes on the wire.
    var percentEncoded: String {
        let encodedValue: String
        switch value {
        case .text(let text): encodedValue = PercentEncoding.encodeUnreserved(text)
        case .key(let key): encodedValue = key.percentEncoded
        }
        return PercentEncoding.encodeUnreserved(name) + "=" + encodedValue
    }

    /// `name=value`, redacted: key values show as `REDACTED`.
    public var description: String {
        Redaction.redact(PercentEncoding.encodeUnreserved(name) + "=" + {
            switch value {
            case .text(let text): PercentEncoding.encodeUnreserved(text)
            case .key: Redaction.placeholder
            }
        }())
    }
}
