import Foundation

/// What a request carries besides its URL path: query parameters and/or a body.
/// (Moya's `Task`, with Sendable query items instead of `[String: Any]`.)
///
/// A body's `Content-Type` is set from the case unless the router's `headers` already set one.
public enum RequestTask: Sendable {
    /// No query, no body.
    case plain
    /// Query parameters only.
    case queryParameters([QueryItem])
    /// A JSON body encoded with `JSONEncoder` (`Content-Type: application/json`).
    case jsonBody(any Encodable & Sendable)
    /// A body sent as given, with its content type.
    case rawBody(Data, contentType: String)
    /// A body and query parameters (e.g. a POST whose key must still travel in the query).
    case bodyAndQuery(body: Data, contentType: String, query: [QueryItem])
    /// A `multipart/form-data` body (RFC 7578) with a random boundary.
    case multipart([MultipartPart])
}

/// One part of a `multipart/form-data` body (RFC 7578 §4.2).
public struct MultipartPart: Sendable, Hashable {
    /// The form field name.
    public var name: String
    /// An optional file name for the `filename` parameter.
    public var filename: String?
    /// The part's `Content-Type`; none is sent when nil (text/plain by RFC 7578 §4.4).
    public var contentType: String?
    /// The part's bytes.
    public var data: Data

    public init(name: String, data: Data, filename: String? = nil, contentType: String? = nil) {
        self.name = name
        self.data = data
        self.filename = filename
        self.contentType = contentType
    }

    /// A text field, sent as UTF-8.
    public static func text(_ name: String, _ value: String) -> MultipartPart {
        MultipartPart(name: name, data: Data(value.utf8))
    }
}
