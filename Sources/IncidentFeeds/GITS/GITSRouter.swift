import Foundation
import IncidentNetworking

/// Gyeonggi-do traffic information center (GITS) open API.
///
/// `GET {base}/getIncidentInfo?serviceKey=KEY` (or `GET {endpoint}?serviceKey=KEY` when the source's
/// `baseURL` is the endpoint) answers XML only:
/// `ServiceResult/msgHeader{headerCd, headerMsg, itemCount}/msgBody/itemList*`.
/// Base URL: `https://openapigits.gg.go.kr/api/rest/` (GITS open API guide).
public enum GITSRouter: Router {
    /// The incidents active now (돌발상황정보).
    case getIncidentInfo(key: APIKey, baseURL: URL?)

    public static let defaultBaseURL = URL(constant: "https://openapigits.gg.go.kr/api/rest/")
    /// The query parameter that carries the service key (data.go.kr's name for it).
    public static let keyParameter = "serviceKey"

    public var baseURL: URL {
        switch self { case .getIncidentInfo(_, let baseURL): baseURL ?? Self.defaultBaseURL }
    }

    /// The operation, below a base URL (`…/api/rest/`); nothing when `baseURL` is the full
    /// endpoint (`…/api/rest/getIncidentInfo`), which every provider's sources may give.
    public var path: String { EndpointRouter.operationPath("getIncidentInfo", below: baseURL) }
    public var method: HTTPMethod { .get }
    public var headers: [String: String] { ["Accept": "application/xml, text/xml"] }

    public var task: RequestTask {
        switch self {
        case .getIncidentInfo(let key, _): .queryParameters([.key(Self.keyParameter, key)])
        }
    }

    /// One incident in the real response's shape (Moya's `sampleData`), for stubbed tests.
    public var sampleResponse: StubResponse? {
        StubResponse(headers: ["Content-Type": "text/xml;charset=UTF-8"], text: """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?><ServiceResult><comMsgHeader/><msgHeader>\
            <headerCd>0</headerCd><headerMsg>정상적으로 처리되었습니다.</headerMsg><itemCount>1</itemCount></msgHeader>\
            <msgBody><itemList><routeId></routeId><linkId>1000000001</linkId><spotId></spotId><regSeq>202401010001</regSeq>\
            <confirmDate>2024-01-01 09:05:00</confirmDate><startDate>2024-01-01 09:00:00</startDate>\
            <estEndDate>2024-01-01 11:00:00</estEndDate><endDate></endDate><restrictType>1차로</restrictType>\
            <inciDesc>[사고] 경부고속도로 (서울방향) 수원IC → 신갈JC  1차로 통제</inciDesc><inciPlace1>경부고속도로</inciPlace1>\
            <inciPlace2>(서울방향) 수원IC → 신갈JC</inciPlace2><coord_x>127.1</coord_x><coord_y>37.27</coord_y></itemList>\
            </msgBody></ServiceResult>
            """)
    }
}
