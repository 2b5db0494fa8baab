import Foundation
import IncidentNetworking

/// The link a paged response gives to its next page (Open511 `pagination.next_url`), as the
/// URL to request.
enum PageLink {
    /// Resolves `link` against the URL the page was fetched from (RFC 3986 §5: a relative link
    /// such as `/traffic/events?offset=20` takes that URL's scheme, host and port), then, when
    /// it stays on the same origin, makes it carry exactly the key the first request carried:
    /// each of `keyParameterNames` present once in `requestURL` replaces every occurrence of
    /// that parameter in the link (servers echo the key in `next_url`, sometimes encoded
    /// differently, sometimes not at all), keeping its place, or is appended. A link to another
    /// origin is returned untouched, and so without the key; the caller refuses to follow it.
    ///
    /// - Throws: ``FeedError`` `unexpectedResponse` when `link` is not a URL reference.
    static func resolve(_ link: String, against requestURL: URL, keyParameterNames: [String], provider: String) throws -> URL {
        guard let resolved = URL(string: link, relativeTo: requestURL)?.absoluteURL,
              var components = URLComponents(url: resolved, resolvingAgainstBaseURL: false) else {
            throw FeedError(.unexpectedResponse, provider: provider,
                            message: "the link to the next page ('\(Redaction.redact(String(link.prefix(200))))') is not a URL; nothing was stored")
        }
        guard RedirectOrigin.same(resolved, requestURL), !keyParameterNames.isEmpty else { return resolved }
        let sent = pairs(URLComponents(url: requestURL, resolvingAgainstBaseURL: false)?.percentEncodedQuery)
        var query = pairs(components.percentEncodedQuery)
        for name in keyParameterNames {
            let ours = sent.filter { self.name(of: $0) == name.lowercased() }
            guard ours.count == 1 else { continue }
            let first = query.firstIndex { self.name(of: $0) == name.lowercased() }
            query.removeAll { self.name(of: $0) == name.lowercased() }
            query.insert(ours[0], at: min(first ?? query.count, query.count))
        }
        components.percentEncodedQuery = query.isEmpty ? nil : query.joined(separator: "&")
        return components.url ?? resolved
    }

    /// The `name=value` pairs of a raw query, as written.
    private static func pairs(_ query: String?) -> [String] {
        (query ?? "").split(separator: "&", omittingEmptySubsequences: true).map(String.init)
    }

    /// The parameter name of a raw pair, percent-decoded and lower-cased.
    private static func name(of pair: String) -> String {
        let raw = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
        return (raw.removingPercentEncoding ?? raw).lowercased()
    }
}
