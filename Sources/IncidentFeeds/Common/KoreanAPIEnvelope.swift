import IncidentXML

/// The envelopes Korean public APIs answer in, on every route, and what their result codes mean.
///
/// Shapes (any of them may arrive on any provider's route: the data.go.kr gateway and proxies
/// answer for the API behind them, often with HTTP 200):
/// - the gateway's error document `OpenAPI_ServiceResponse/cmmMsgHeader/{errMsg, returnAuthMsg,
///   returnReasonCode}`, in XML or JSON (sometimes with HTTP 403);
/// - the data.go.kr standard `response/header/{resultCode, resultMsg}`, also ITS's own envelope
///   (`{"header": {"resultCode", "resultMsg"}, "body": …}` in JSON);
/// - GITS's `ServiceResult/msgHeader/{headerCd, headerMsg, itemCount}`.
///
/// Codes are classified by number, never by message text. `resultCode` and `returnReasonCode`
/// share the data.go.kr common code list (OpenAPI guide, "OpenAPI 에러 코드": 00 normal, 01
/// application, 02 database, 03 no data, 04 HTTP, 05 service time-out, 10/11 request
/// parameters, 12 no such service, 20 access denied, 21 key temporarily disabled, 22 request
/// limit exceeded, 30 key not registered, 31 key expired, 32 IP not registered, 33 unsigned
/// call, 99 unknown); ITS adds 4001 (daily request limit used up) and 4005 (invalid key).
/// GITS's `headerCd` follows the Korean bus-information APIs' template: 0 normal, 4 no result,
/// 5/6/7 key missing, unregistered or suspended, 8 request limit exceeded.
enum KoreanAPIEnvelope {
    static let gatewayRoot = "OpenAPI_ServiceResponse"

    /// Which code list a code belongs to.
    enum CodeList {
        /// `resultCode` / `returnReasonCode`: the data.go.kr common list plus ITS's codes.
        case dataGoKr
        /// GITS's `headerCd`.
        case gits
    }

    /// The XML envelope fields every Korean provider's schema reads, so that whichever
    /// envelope arrives can be classified.
    static let xmlEnvelopeFields = ["resultCode", "resultMsg", "returnReasonCode", "returnAuthMsg", "errMsg"]

    /// Whether `code` says success, or the typed error it means.
    ///
    /// Without a code, a data.go.kr error name in `message` (or in `alsoIn`) stands in for its
    /// code (``reasonCode(named:)``) when that code is an error; a success is never read from text.
    ///
    /// - Returns: true for success (including "no data": an empty, complete answer); false when
    ///   there is no code at all (the caller decides: records without a code are stored but
    ///   cannot clear; no records and no code is an error).
    /// - Throws: ``FeedError`` `quotaExceeded`, `invalidKey`, `gatewayError` or `apiError`, with the
    ///   code, the provider's message and what it means.
    static func check(code: String?, message: String?, alsoIn otherMessages: [String?] = [], list: CodeList, field: String,
                      provider: String, speaker: String = "the API") throws -> Bool {
        guard let text = code?.trimmingCharacters(in: .whitespaces), !text.isEmpty else {
            guard list == .dataGoKr, let named = reasonCode(named: [message] + otherMessages), !["00", "03"].contains(named.code) else {
                return false
            }
            return try check(code: named.code, message: message, list: list,
                             field: "no \(field) but the error name \(named.name), that is \(field)", provider: provider, speaker: speaker)
        }
        let said = "\(speaker) answered \(field) \(text) (\(message ?? "no message"))"
        guard let number = Int(text) else {
            throw FeedError(.apiError, provider: provider, code: text, message: "\(said), which is not a result code")
        }
        let (kind, meaning): (FeedError.Kind, String?) = switch (list, number) {
        case (.gits, 0), (.gits, 4), (.dataGoKr, 0), (.dataGoKr, 3): (.apiError, nil)
        case (.gits, 8), (.dataGoKr, 22), (.dataGoKr, 4001):
            (.quotaExceeded, "the request quota is used up; daily quotas reset at midnight Korea time (or raise the quota with the provider)")
        case (.gits, 5), (.gits, 6), (.gits, 7), (.dataGoKr, 30), (.dataGoKr, 4005):
            (.invalidKey, "the key is missing, not registered or not approved for this API")
        case (.dataGoKr, 31): (.invalidKey, "the key's usage period has expired: renew it with the provider")
        case (.dataGoKr, 32): (.invalidKey, "this server's IP address is not registered for the key")
        case (.dataGoKr, 20): (.invalidKey, "access to this service is denied for the key: apply for this API")
        case (.dataGoKr, 21): (.invalidKey, "the key is temporarily disabled: check its status with the provider")
        case (.dataGoKr, 10), (.dataGoKr, 11): (.gatewayError, "a request parameter is wrong or missing: check the source's options")
        case (.dataGoKr, 12): (.gatewayError, "the API is not served at this address (wrong URL or retired service)")
        case (.dataGoKr, 33): (.gatewayError, "the call was not signed as required")
        default: (.apiError, "the API failed; try again later")
        }
        guard let meaning else { return true }
        throw FeedError(kind, provider: provider, code: text, message: "\(said): \(meaning)")
    }

    /// Whether `code` is a success code that says there is no data (GITS 4 "no result",
    /// data.go.kr 03 "NODATA_ERROR"): an empty answer that needs no count.
    static func saysNoData(_ code: String?, list: CodeList) -> Bool {
        switch (list, code.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }) {
        case (.gits, 4), (.dataGoKr, 3): true
        default: false
        }
    }

    /// The data.go.kr gateway's error names (the "OpenAPI 에러 코드" table of the OpenAPI guide:
    /// each reason code has one fixed upper-case name, which the gateway sends in `returnAuthMsg`
    /// or `errMsg`) and their reason codes. Identifiers, not prose: they stand in for a
    /// `returnReasonCode` the envelope does not carry.
    static let gatewayErrorNames: [(name: String, code: String)] = [
        ("APPLICATION_ERROR", "01"), ("DB_ERROR", "02"), ("NODATA_ERROR", "03"), ("HTTP_ERROR", "04"),
        ("SERVICETIME_OUT", "05"), ("INVALID_REQUEST_PARAMETER_ERROR", "10"),
        ("NO_MANDATORY_REQUEST_PARAMETERS_ERROR", "11"), ("NO_OPENAPI_SERVICE_ERROR", "12"), ("SERVICE_ACCESS_DENIED_ERROR", "20"),
        ("TEMPORARILY_DISABLE_THE_SERVICEKEY_ERROR", "21"), ("LIMITED_NUMBER_OF_SERVICE_REQUESTS_EXCEEDS_ERROR", "22"),
        ("SERVICE_KEY_IS_NOT_REGISTERED_ERROR", "30"), ("DEADLINE_HAS_EXPIRED_ERROR", "31"), ("UNREGISTERED_IP_ERROR", "32"),
        ("UNSIGNED_CALL_ERROR", "33"), ("UNKNOWN_ERROR", "99"),
    ]

    /// The reason code whose error name (``gatewayErrorNames``) one of `messages` carries as a
    /// whole word, in any case and with spaces or hyphens for underscores
    /// (`Limited number of service requests exceeds error.`); nil when none does.
    /// `LIMITED_NUMBER_OF_SERVICE_REQUESTS_PER_SECOND_EXCEEDS_ERROR`, a rate limit rather than the
    /// daily quota, names none.
    static func reasonCode(named messages: [String?]) -> (code: String, name: String)? {
        for message in messages.compactMap({ $0 }) {
            let words = "_" + String(message.uppercased().unicodeScalars.map {
                ("A"..."Z").contains($0) || ("0"..."9").contains($0) ? Character($0) : "_"
            }) + "_"
            if let known = gatewayErrorNames.first(where: { words.contains("_" + $0.name + "_") }) { return (known.code, known.name) }
        }
        return nil
    }

    /// The error for a data.go.kr gateway document (`OpenAPI_ServiceResponse`), whatever its code.
    /// Without a `returnReasonCode`, the error name in `returnAuthMsg` or `errMsg` gives the code
    /// (``check(code:message:alsoIn:list:field:provider:speaker:)``): a quota message without a
    /// code is a used-up quota all the same.
    static func gatewayError(code: String?, authMessage: String?, errorMessage: String?, provider: String) -> FeedError {
        let message = authMessage ?? errorMessage
        do {
            _ = try check(code: code, message: message, alsoIn: [errorMessage], list: .dataGoKr, field: "returnReasonCode",
                          provider: provider, speaker: "the data.go.kr gateway")
        } catch let error as FeedError {
            return error
        } catch {}
        return FeedError(.gatewayError, provider: provider, code: code,
                         message: "the data.go.kr gateway answered instead of the API (returnReasonCode \(code ?? "none"), \(message ?? "no message"))")
    }
}
