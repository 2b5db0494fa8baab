import Foundation
import IncidentXML

/// The data.go.kr API gateway's error envelope, sent in XML (even when JSON was asked for),
/// usually with HTTP 200:
/// `OpenAPI_ServiceResponse/cmmMsgHeader/{errMsg, returnAuthMsg, returnReasonCode}`.
///
/// Errors are classified by `returnReasonCode`, never by the message text
/// (codes from the data.go.kr OpenAPI guide, "OpenAPI 에러 코드").
public enum DataGoKrGateway {
    public static let rootElement = "OpenAPI_ServiceResponse"
    /// Envelope fields a provider adds to its XML schema so the gateway error can be read.
    public static let envelopeFields = [XMLName("returnReasonCode"), XMLName("returnAuthMsg"), XMLName("errMsg")]

    /// The error for gateway `code`, with what to do about it.
    public static func error(code: String?, authMessage: String?, provider: String) -> FeedError {
        let number = code.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        let label = authMessage ?? "no message"
        let (kind, advice): (FeedError.Kind, String) = switch number {
        case 22: (.quotaExceeded, "the daily request quota is used up; it resets at midnight Korea time (or raise the quota on data.go.kr)")
        case 30: (.invalidKey, "the service key is not registered: it must be registered and approved for this API")
        case 31: (.invalidKey, "the service key's usage period has expired: renew it on data.go.kr")
        case 32: (.invalidKey, "this server's IP address is not registered for the key: register it on data.go.kr")
        case 20: (.invalidKey, "access to this service is denied for the key: apply for this API on data.go.kr")
        case 21: (.invalidKey, "the key is temporarily disabled: check its status on data.go.kr")
        case 33: (.gatewayError, "the call was not signed as required")
        case 10: (.gatewayError, "a request parameter is wrong: check the source's options")
        case 12: (.gatewayError, "the API is not served (wrong URL or retired service): check the base URL")
        default: (.gatewayError, "the gateway failed for an unknown reason; try again later")
        }
        return FeedError(kind, provider: provider, code: code,
                         message: "data.go.kr gateway error \(code ?? "?") (\(label)): \(advice)")
    }
}
