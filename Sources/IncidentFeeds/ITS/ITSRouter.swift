import Foundation
import IncidentNetworking

/// Korea's national ITS open API (openapi.its.go.kr), 돌발상황정보 `eventInfo`.
///
/// `GET https://openapi.its.go.kr:9443/eventInfo?apiKey=KEY&type=all&eventType=all&minX=…&maxX=…&minY=…&maxY=…&getType=json`
/// (ITS open API guide). The bounding box is WGS84 longitude (X) and latitude (Y).
public enum ITSRouter: Router {
    case eventInfo(key: APIKey, parameters: EventInfoParameters, baseURL: URL?)

    /// The query parameters of `eventInfo`; their values and defaults are ``ITSProvider``'s options.
    public struct EventInfoParameters: Sendable, Equatable {
        /// Road class: all, ex (expressways), its (national roads), loc, sgg, etc.
        public var type: String
        /// Event type: all, cor (construction), acc (accident), wea (weather), ete, dis, etc.
        public var eventType: String
        /// WGS84 `[minX, minY, maxX, maxY]` (longitude, latitude).
        public var bbox: [Double]
        /// `json` or `xml`.
        public var getType: String

        public init(type: String, eventType: String, bbox: [Double], getType: String) {
            self.type = type
            self.eventType = eventType
            self.bbox = bbox
            self.getType = getType
        }
    }

    public static let defaultBaseURL = URL(constant: "https://openapi.its.go.kr:9443/")
    /// The query parameter that carries the API key.
    public static let keyParameter = "apiKey"

    public var baseURL: URL {
        switch self { case .eventInfo(_, _, let baseURL): baseURL ?? Self.defaultBaseURL }
    }

    /// The operation, below a base URL; nothing when `baseURL` is the full endpoint
    /// (`https://openapi.its.go.kr:9443/eventInfo`).
    public var path: String { EndpointRouter.operationPath("eventInfo", below: baseURL) }
    public var method: HTTPMethod { .get }
    public var headers: [String: String] { ["Accept": "application/json, application/xml, text/xml"] }

    public var task: RequestTask {
        switch self {
        case let .eventInfo(key, p, _):
            .queryParameters([
                .key(Self.keyParameter, key), .text("type", p.type), .text("eventType", p.eventType),
                .text("minX", Self.degrees(p.bbox[0])), .text("maxX", Self.degrees(p.bbox[2])),
                .text("minY", Self.degrees(p.bbox[1])), .text("maxY", Self.degrees(p.bbox[3])),
                .text("getType", p.getType),
            ])
        }
    }

    /// One event in the JSON envelope (Moya's `sampleData`), for stubbed tests.
    public var sampleResponse: StubResponse? {
        StubResponse(headers: ["Content-Type": "application/json"], text: """
            {"header":{"resultCode":0,"resultMsg":"success"},"body":{"totalCount":1,"items":[{"type":"고속도로",\
            "eventType":"공사","eventDetailType":"작업","startDate":"20240101090000","coordX":"127.4226","coordY":"36.4137",\
            "linkId":"1870199600","roadName":"경부선","roadNo":"1","roadDrcType":"기점","lanesBlockType":"","lanesBlocked":"",\
            "message":"(갓길)작업중","endDate":""}]}}
            """)
    }

    /// Degrees as plain decimal text (`126.76`, never `1.2676e2`).
    static func degrees(_ value: Double) -> String {
        var text = String(format: "%.6f", value)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text
    }
}
