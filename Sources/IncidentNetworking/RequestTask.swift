/// What a request carries besides its URL path. (Moya's `Task`, with Sendable query items
/// instead of `[String: Any]`; the providers send no request bodies, so there are no body
/// cases.)
public enum RequestTask: Sendable {
    /// No query.
    case plain
    /// Query parameters, in order.
    case queryParameters([QueryItem])
}
