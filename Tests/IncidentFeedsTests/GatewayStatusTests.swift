import Foundation
@testable import IncidentFeeds
import IncidentNetworking
import TestSupport
import Testing

/// The data.go.kr gateway's error document in the body of an HTTP error (issue 20, point 6): its
/// JSON form comes with HTTP 403 and is read as the same document in XML with HTTP 200 is.
@Suite("Gateway errors behind an HTTP status")
struct GatewayStatusTests {
    static func httpError(_ status: Int, body: String) -> NetworkError {
        NetworkError(code: .unacceptableStatus(status), label: "its-seoul", method: .get, url: "https://openapi.its.go.kr:9443/eventInfo",
                     statusCode: status, attempts: 1, bodyExcerpt: body)
    }

    @Test("the real JSON gateway answer with HTTP 403 (code 30) is the key's problem for every provider, as its XML form is",
          arguments: ["gits", "its", "datex2", "open511", "wzdx"])
    func json403(provider: String) throws {
        let body = try String(contentsOf: TestPaths.sharedFeed("datagokr/gateway_error_30_json_http403_2026-08.json"), encoding: .utf8)
        let type = try #require(ProviderRegistry.provider(named: provider))
        let error = try #require(type.classify(Self.httpError(403, body: body)) as? FeedError)
        #expect(error.kind == .invalidKey && error.code == "30" && error.provider == provider)
        #expect(error.message == "the data.go.kr gateway answered returnReasonCode 30 (등록되지 않은 서비스키): the key is missing, not registered or not approved for this API (HTTP 403)")
    }

    @Test("variants: the XML form with a 4xx, a quota (22) with HTTP 429, and bodies that are not the gateway's stay HTTP errors")
    func variants() throws {
        let xml = try String(contentsOf: TestPaths.sharedFeed("datagokr/gateway_error_30_SERVICE_KEY_IS_NOT_REGISTERED_doc_quoted.xml"), encoding: .utf8)
        let fromXML = try #require(GITSProvider.classify(Self.httpError(401, body: xml)) as? FeedError)
        #expect(fromXML.kind == .invalidKey && fromXML.code == "30")
        let quota = #"{"OpenAPI_ServiceResponse":{"cmmMsgHeader":{"errMsg":"LIMITED_NUMBER_OF_SERVICE_REQUESTS_EXCEEDS_ERROR","returnAuthMsg":"LIMITED","returnReasonCode":"22"}}}"#
        let quotaError = try #require(ITSProvider.classify(Self.httpError(429, body: quota)) as? FeedError)
        #expect(quotaError.kind == .quotaExceeded && quotaError.code == "22")
        for body in ["<html><body>403 Forbidden</body></html>", #"{"error": "forbidden"}"#, ""] {
            let error = GITSProvider.classify(Self.httpError(403, body: body))
            #expect((error as? NetworkError)?.statusCode == 403, "\(body)")
        }
    }
}
