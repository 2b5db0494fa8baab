import Foundation
import IncidentXML

/// Reads `getIncidentInfo` XML into ``AccidentDTO`` values while parsing (libxml2 SAX, streaming).
public enum GITSRecordReader {
    /// Field order of ``schema``; ``dto(from:)`` reads by these positions.
    static let fieldNames = ["routeId", "linkId", "spotId", "regSeq", "confirmDate", "startDate", "estEndDate",
                             "endDate", "restrictType", "inciDesc", "inciPlace1", "inciPlace2", "coord_x", "coord_y"]
    /// Envelope field order: GITS's header, then the fields of the other Korean envelopes.
    static let envelopeNames = ["headerCd", "headerMsg", "itemCount"] + KoreanAPIEnvelope.xmlEnvelopeFields

    public static let schema = XMLRecordSchema(
        recordElements: [XMLName("itemList")],
        fields: fieldNames.map { XMLName($0) },
        envelopeFields: envelopeNames.map { XMLName($0) })

    /// Builds the DTO from a record read with ``schema``.
    static func dto(from record: XMLRecord) -> AccidentDTO {
        AccidentDTO(routeId: record[0], linkId: record[1], spotId: record[2], regSeq: record[3],
                    confirmDate: record[4], startDate: record[5], estEndDate: record[6], endDate: record[7],
                    restrictType: record[8], inciDesc: record[9], inciPlace1: record[10], inciPlace2: record[11],
                    coord_x: record[12], coord_y: record[13], line: record.line, problems: record.problems)
    }

    static let format = XMLFeedFormat(provider: GITSProvider.name, schema: schema, successField: "headerCd 0",
                                      dto: dto(from:), inspect: inspect(_:_:))

    /// Reads the envelope: the root is `ServiceResult` and `headerCd` is 0 (or 4, "no result":
    /// an empty, complete answer); `itemCount` is the declared number of records. Another
    /// Korean envelope on this route is classified by its code.
    static func inspect(_ envelope: XMLEnvelope, _ tally: inout ResponseTally) throws {
        let provider = GITSProvider.name
        let value = { (name: String) in envelopeNames.firstIndex(of: name).flatMap { envelope[$0] } }
        switch envelope.rootElement?.localName {
        case "ServiceResult":
            tally.envelopeMessage = value("headerMsg")
            tally.confirmedSuccess = try KoreanAPIEnvelope.check(code: value("headerCd"), message: value("headerMsg"),
                                                                 list: .gits, field: "headerCd", provider: provider)
            tally.declare(value("itemCount"), field: "itemCount")
            tally.emptyAnswerNeeds = "itemCount"
            tally.codeSaysNoData = KoreanAPIEnvelope.saysNoData(value("headerCd"), list: .gits)
        case KoreanAPIEnvelope.gatewayRoot:
            throw KoreanAPIEnvelope.gatewayError(code: value("returnReasonCode"), authMessage: value("returnAuthMsg"), errorMessage: value("errMsg"),
                                                 provider: provider)
        case "response":
            // The data.go.kr standard envelope: an error for this route whatever it says.
            if try KoreanAPIEnvelope.check(code: value("resultCode"), message: value("resultMsg"), list: .dataGoKr,
                                           field: "resultCode", provider: provider) {
                throw FeedError(.unexpectedResponse, provider: provider,
                                message: "a data.go.kr <response> document answered instead of GITS's ServiceResult (resultCode \(value("resultCode") ?? "")); check the base URL")
            }
            throw FeedError(.unexpectedResponse, provider: provider,
                            message: "a <response> document without a result code answered instead of GITS's ServiceResult (\(value("resultMsg") ?? "no message")); check the base URL")
        case let other:
            throw FeedError(.unexpectedResponse, provider: provider,
                            message: "expected a GITS ServiceResult document but the root element is <\(other ?? "none")>; check the base URL")
        }
    }
}
