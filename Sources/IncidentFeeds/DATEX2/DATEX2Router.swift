import Foundation
import IncidentNetworking

/// A DATEX II SituationPublication served over HTTP GET: one URL, the whole publication.
///
/// DATEX II fixes the payload, not the URL: each publisher serves its own (Fintraffic's
/// Digitraffic `/api/traffic-message/v1/messages.datex2`, NDW's open-data files, …), so the
/// source's `baseURL` is the publication's full URL, query included. The default is
/// Digitraffic's active Finnish traffic announcements, DATEX II 2.2.3, public, no key
/// (tmfg/digitraffic-road `TrafficMessageControllerV1`: `inactiveHours` defaults to 0 and
/// `situationType` to `TRAFFIC_ANNOUNCEMENT`). Digitraffic asks clients to name themselves in
/// a `Digitraffic-User` header (digitraffic.fi, "Support / Instructions"), sent to its hosts only.
///
/// A server that wants a key gets it as the query parameter the source's `keyParameter`
/// names, percent-encoded once and redacted from all text (`QueryItem.key`).
public struct DATEX2Router: Router {
    public static let defaultBaseURL = URL(constant: "https://tie.digitraffic.fi/api/traffic-message/v1/messages.datex2")

    public var baseURL: URL
    /// The key and the query parameter that carries it, when the server wants one.
    public var key: (parameter: String, key: APIKey)?

    public init(baseURL: URL? = nil, key: (parameter: String, key: APIKey)? = nil) {
        self.baseURL = baseURL ?? Self.defaultBaseURL
        self.key = key
    }

    public var path: String { "" }

    public var headers: [String: String] {
        var headers = ["Accept": "application/xml, text/xml"]
        if baseURL.host?.lowercased().hasSuffix("digitraffic.fi") == true { headers["Digitraffic-User"] = "TrafficIncidents" }
        return headers
    }

    public var task: RequestTask {
        guard let key else { return .plain }
        return .queryParameters([.key(key.parameter, key.key)])
    }
}
