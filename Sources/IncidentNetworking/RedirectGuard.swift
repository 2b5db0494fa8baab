import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Keeps credentials on the origin they were meant for (RFC 6454 origin: scheme, host, port).
enum RedirectGuard {
    /// Headers dropped on a cross-origin redirect, besides those named like a registered key
    /// parameter (`X-API-Key` for `apiKey`).
    static let credentialHeaders: Set<String> = ["authorization", "proxy-authorization", "cookie"]

    static func origin(of url: URL?) -> String? {
        guard let url, let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased() else { return nil }
        let port = url.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : -1)
        return "\(scheme)://\(host):\(port)"
    }

    static func isCrossOrigin(from original: URL?, to next: URL?) -> Bool {
        guard let a = origin(of: original), let b = origin(of: next) else { return true }
        return a != b
    }

    /// The request without key query parameters and credential headers; nil if its URL
    /// cannot be rebuilt (the redirect is then refused).
    static func strippingCredentials(from request: URLRequest) -> URLRequest? {
        guard let url = request.url, let stripped = strippingKeyParameters(from: url) else { return nil }
        var result = request
        result.url = stripped
        for name in (request.allHTTPHeaderFields ?? [:]).keys where isCredentialHeader(name) {
            result.setValue(nil, forHTTPHeaderField: name)
        }
        return result
    }

    static func isCredentialHeader(_ name: String) -> Bool {
        let lowered = name.lowercased()
        if credentialHeaders.contains(lowered) { return true }
        func squeeze(_ text: String) -> String {
            var text = text.lowercased()
            if text.hasPrefix("x-") { text.removeFirst(2) }
            return text.filter { $0 != "-" && $0 != "_" }
        }
        let squeezed = squeeze(name)
        return Redaction.keyParameterNames.contains { squeeze($0) == squeezed }
    }

    /// The URL with every registered key parameter (`Redaction.register(keyParameterName:)`)
    /// removed from its query.
    static func strippingKeyParameters(from url: URL) -> URL? {
        let text = url.absoluteString
        let (withoutFragment, fragment) = split(text, at: "#")
        let (base, query) = split(withoutFragment, at: "?")
        guard let query else { return url }
        let kept = query.split(separator: "&", omittingEmptySubsequences: false).filter { pair in
            let rawName = String(pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
            let name = rawName.removingPercentEncoding ?? rawName
            return !Redaction.isKeyParameterName(name)
        }
        var rebuilt = base
        if !kept.isEmpty { rebuilt += "?" + kept.joined(separator: "&") }
        if let fragment { rebuilt += "#" + fragment }
        return URL(string: rebuilt)
    }

    private static func split(_ text: String, at separator: Character) -> (String, String?) {
        guard let index = text.firstIndex(of: separator) else { return (text, nil) }
        return (String(text[..<index]), String(text[text.index(after: index)...]))
    }
}
