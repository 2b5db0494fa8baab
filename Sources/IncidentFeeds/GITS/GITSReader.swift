import Foundation
import IncidentXML

/// Reads `getIncidentInfo` XML into ``AccidentDTO`` values while parsing (libxml2 SAX, streaming).
public enum GITSRecordReader {
    /// Field order of ``schema``; ``dto(from:)`` reads by these positions.
    static let fieldNames = ["routeId", "linkId", "spotId", "regSeq", "confirmDate", "startDate", "estEndDate",
                             "endDate", "restrictType", "inciDesc", "inciPlace1", "inciPlace2", "coord_x", "coord_y"]
    static let headerNames = ["headerCd", "headerMsg", "itemCount"]

    public static let schema = XMLRecordSchema(
        recordElements: [XMLName("itemList")],
        fields: fieldNames.map { XMLName($0) },
        envelopeFields: headerNames.map { XMLName($0) } + DataGoKrGateway.envelopeFields)

    /// Builds the DTO from a record read with ``schema``.
    public static func dto(from record: XMLRecord) -> AccidentDTO {
        AccidentDTO(routeId: record[0], linkId: record[1], spotId: record[2], regSeq: record[3],
                    confirmDate: record[4], startDate: record[5], estEndDate: record[6], endDate: record[7],
                    restrictType: record[8], inciDesc: record[9], inciPlace1: record[10], inciPlace2: record[11],
                    coord_x: record[12], coord_y: record[13], line: record.line)
    }

    static let format = XMLFeedFormat(provider: GITSProvider.name, schema: schema, dto: dto(from:),
                                      checkEnvelope: checkEnvelope(_:atEnd:))

    /// Reads a whole response file, streaming.
    /// - Throws: ``FeedError`` (`apiError` for headerCd ≠ 0, `gatewayError`/`invalidKey`/
    ///   `quotaExceeded` for a gateway envelope, `malformedBody`, `unexpectedResponse`), or what
    ///   `body` throws.
    public static func read(file: URL, _ body: (AccidentDTO) throws -> Void) throws {
        try format.read(file: file, body)
    }

    /// Checks the envelope: the root is `ServiceResult` and `headerCd` is 0.
    static func checkEnvelope(_ envelope: XMLEnvelope, atEnd: Bool) throws {
        let provider = GITSProvider.name
        switch envelope.rootElement?.localName {
        case "ServiceResult":
            break
        case DataGoKrGateway.rootElement:
            throw DataGoKrGateway.error(code: envelope[3], authMessage: envelope[4] ?? envelope[5], provider: provider)
        case let other:
            throw FeedError(.unexpectedResponse, provider: provider,
                            message: "expected a GITS ServiceResult document but the root element is <\(other ?? "none")>; check the base URL")
        }
        guard let code = envelope[0] else {
            throw FeedError(.unexpectedResponse, provider: provider,
                            message: "the response has no msgHeader/headerCd\(atEnd ? "" : " before its first itemList"); check the base URL")
        }
        switch Int(code) {
        case 0, 4:
            return  // 4: "결과가 존재하지 않습니다" — no incident right now, a complete empty answer
        case 5, 6, 7:
            throw FeedError(.invalidKey, provider: provider, code: code,
                            message: "GITS refused the service key: headerCd=\(code) (\(envelope[1] ?? "no message")); the key must be registered and approved for getIncidentInfo")
        case 8:
            throw FeedError(.quotaExceeded, provider: provider, code: code,
                            message: "GITS request limit exceeded: headerCd=\(code) (\(envelope[1] ?? "no message")); the daily quota resets at midnight Korea time")
        default:
            throw FeedError(.apiError, provider: provider, code: code,
                            message: "GITS API error headerCd=\(code) (\(envelope[1] ?? "no message")); nothing was stored")
        }
    }
}
