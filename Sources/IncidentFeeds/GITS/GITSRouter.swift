import Foundation
import IncidentNetworking

/// Gyeonggi-do traffic information center (GITS) open API.
///
/// `GET {base}/getIncidentInfo?serviceKey=KEY` answers XML only:
/// `ServiceResult/msgHeader{headerCd, headerMsg, itemCount}/msgBody/itemList*`.
/// Base URL: `https://openapigits.gg.go.kr/api/rest/` (GITS open API guide).
public enum GITSRouter: Router {
    /// The incidents active now (돌발상황정보).
    case getIncidentInfo(key: APIKey, baseURL: URL?)

    public static let defaultBaseURL = URL(constant: "https://openapigits.gg.go.kr/api/rest/")

    public var baseURL: URL {
        switch self { case .getIncidentInfo(_, let baseURL): baseURL ?? Self.defaultBaseURL }
    }

    public var path: String { "getIncidentInfo" }
    public var method: HTTPMethod { .get }
    public var headers: [String: String] { ["Accept": "application/xml, text/xml"] }

    public var task: RequestTask {
        switch self {
        case .getIncidentInfo(let key, _): .queryParameters([.key("serviceKey", key)])
        }
    }

    public var sampleResponse: StubResponse? { nil }
}
