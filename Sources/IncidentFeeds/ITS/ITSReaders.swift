import Foundation
import IncidentCore
import IncidentJSON
import IncidentXML

/// Reads `eventInfo` responses, JSON or XML, into ``EventInfoDTO`` values while parsing.
///
/// Accepted shapes (all seen from ITS or its clients):
/// - JSON `{"header":{"resultCode","resultMsg"},"body":{"totalCount","items":…}}`, the same
///   inside `{"response":…}`, the older `{"response":{"datacount","data":…}}`, and a bare
///   `items` array (as archived by clients: no envelope, so it cannot clear). `items`/`data`
///   may be an array, one object, `{"item":…}`, `""` or absent; values strings or numbers.
/// - XML `response/header{resultCode,resultMsg}/body{totalCount}/items/item*` and the older
///   `response/{datacount, data*}`; text fields may be CDATA.
/// - On either, the data.go.kr gateway's error document (``KoreanAPIEnvelope``).
///
/// `resultCode` `0`, `"0"` or `"00"` is success; `totalCount` (or `datacount`) declares the
/// number of records.
enum ITSReaders {
    static let fieldNames = EventInfoDTO.fieldNames

    // MARK: XML

    static let xmlEnvelopeNames = ["totalCount", "datacount"] + KoreanAPIEnvelope.xmlEnvelopeFields

    static let xmlSchema = XMLRecordSchema(
        recordElements: [XMLName("item"), XMLName("data")],
        fields: fieldNames.map { XMLName($0) },
        envelopeFields: xmlEnvelopeNames.map { XMLName($0) })

    static let xml = XMLFeedFormat(
        provider: ITSProvider.name, schema: xmlSchema, successField: "resultCode",
        dto: { record in
            EventInfoDTO(values: record.values, position: "record at line \(record.line)", problems: record.problems,
                         isOversized: record.isOversized)
        },
        inspect: { envelope, tally in
            switch envelope.rootElement?.localName {
            case "response", KoreanAPIEnvelope.gatewayRoot:
                try inspect(value: { name in xmlEnvelopeNames.firstIndex(of: name).flatMap { envelope[$0] } },
                            gateway: envelope.rootElement?.localName == KoreanAPIEnvelope.gatewayRoot, &tally)
            case let other:
                throw FeedError(.unexpectedResponse, provider: ITSProvider.name,
                                message: "expected an ITS <response> document but the root element is <\(other ?? "none")>; check the base URL")
            }
        })

    // MARK: JSON

    /// Envelope paths, and the envelope field each one fills.
    static let jsonEnvelope: [(path: JSONPath, name: String)] = [
        (["header", "resultCode"], "resultCode"), (["header", "resultMsg"], "resultMsg"),
        (["response", "header", "resultCode"], "resultCode"), (["response", "header", "resultMsg"], "resultMsg"),
        (["resultCode"], "resultCode"), (["resultMsg"], "resultMsg"),
        (["body", "totalCount"], "totalCount"), (["response", "body", "totalCount"], "totalCount"),
        (["response", "datacount"], "datacount"), (["datacount"], "datacount"),
        (["OpenAPI_ServiceResponse", "cmmMsgHeader", "returnReasonCode"], "returnReasonCode"),
        (["OpenAPI_ServiceResponse", "cmmMsgHeader", "returnAuthMsg"], "returnAuthMsg"),
        (["OpenAPI_ServiceResponse", "cmmMsgHeader", "errMsg"], "errMsg"),
    ]

    static let jsonSchema = JSONRecordSchema(
        recordPaths: [["*"], ["items", "*"], ["data", "*"], ["body", "items", "*"], ["response", "body", "items", "*"],
                      ["response", "data", "*"], ["response", "items", "*"], ["body", "*"], ["response", "body", "*"]],
        envelopePaths: jsonEnvelope.map(\.path))

    static let json = JSONFeedFormat(
        provider: ITSProvider.name, schema: jsonSchema, successField: "resultCode",
        dto: { record in
            guard case .object(let members) = record.value else {
                return EventInfoDTO(values: [], position: "items[\(record.position)]",
                                    problems: ["is not an object but \(record.value.description.prefix(60))"])
            }
            var values = [String?](repeating: nil, count: fieldNames.count)
            for (key, value) in members {
                if let index = fieldNames.firstIndex(of: key) { values[index] = value.scalarText?.nonEmptyTrimmed }
            }
            return EventInfoDTO(values: values, position: "items[\(record.position)]", problems: record.problems,
                                isOversized: record.isOversized)
        },
        inspect: { envelope, tally in
            // Any of the gateway's fields makes the document the gateway's (its code may be missing).
            let gateway = jsonEnvelope.indices.contains { jsonEnvelope[$0].path.steps.first == .key(KoreanAPIEnvelope.gatewayRoot) && envelope[$0] != nil }
            try inspect(value: { name in
                jsonEnvelope.indices.lazy.filter { jsonEnvelope[$0].name == name }.compactMap { envelope[$0]?.scalarText?.nonEmptyTrimmed }.first
            }, gateway: gateway, &tally)
        })

    // MARK: Envelope

    /// Reads ITS's envelope (either syntax) into the tally: the gateway's error document is an
    /// error; `resultCode` is checked; without one, the older `datacount` envelope answers too.
    static func inspect(value: (String) -> String?, gateway: Bool, _ tally: inout ResponseTally) throws {
        let provider = ITSProvider.name
        if gateway {
            throw KoreanAPIEnvelope.gatewayError(code: value("returnReasonCode"), authMessage: value("returnAuthMsg"), errorMessage: value("errMsg"),
                                                 provider: provider)
        }
        tally.envelopeMessage = value("resultMsg")
        // Without a code, an error named in the message is still that error (never a success).
        let succeeded = try KoreanAPIEnvelope.check(code: value("resultCode"), message: value("resultMsg"),
                                                    list: .dataGoKr, field: "resultCode", provider: provider)
        if value("resultCode") != nil {
            tally.confirmedSuccess = succeeded
            tally.declare(value("totalCount"), field: "totalCount")
            tally.emptyAnswerNeeds = "totalCount"
            tally.codeSaysNoData = KoreanAPIEnvelope.saysNoData(value("resultCode"), list: .dataGoKr)
        } else if let count = value("datacount") {
            // The older envelope has no result code: its record count is its answer.
            tally.confirmedSuccess = true
            tally.declare(count, field: "datacount")
        }
    }
}
