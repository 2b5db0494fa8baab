import Foundation
import IncidentXML

/// Reads `eventInfo` JSON. Accepted shapes (all seen from ITS or its clients):
/// `{"header":{"resultCode","resultMsg"},"body":{"totalCount","items":…}}`, the same inside
/// `{"response":…}`, the older `{"response":{"datacount","data":…}}`, and a bare `items`
/// array (as archived by clients). `items`/`data` may be an array, one object, `{"item":…}`,
/// `""` or absent (``OneOrMany``). `resultCode` `0`, `"0"` or `"00"` is success.
///
/// A document with neither a `resultCode` nor any item (`[]`, `{}`, `{"body":{}}`) is not an
/// answer: it is refused rather than read as "no incidents", which would clear the source.
///
/// JSON bodies are decoded whole with `JSONDecoder` (ITS answers are small: one record per
/// active event, a few KB); bodies over ``maxBytes`` are refused rather than loaded, which
/// bounds the memory this path can take (about 12 times the body at its peak).
public enum ITSJSONReader {
    public static let maxBytes = 8 << 20

    struct Document: Decodable {
        var resultCode: String?
        var resultMessage: String?
        var items: [EventInfoDTO] = []

        enum Keys: String, CodingKey { case header, body, response, items, totalCount, datacount, data, resultCode, resultMsg }

        /// A bare items array: no envelope, so no result code.
        init(items: [EventInfoDTO]) {
            self.items = items
        }

        init(from decoder: any Decoder) throws {
            let root = try decoder.container(keyedBy: Keys.self)
            let top = root.contains(.response) ? try root.nestedContainer(keyedBy: Keys.self, forKey: .response) : root
            if top.contains(.header) {
                let header = try top.nestedContainer(keyedBy: Keys.self, forKey: .header)
                resultCode = try header.lenient(.resultCode)
                resultMessage = try header.lenient(.resultMsg)
            } else {
                resultCode = try top.lenient(.resultCode)
                resultMessage = try top.lenient(.resultMsg)
            }
            if top.contains(.body), try !top.decodeNil(forKey: .body) {
                if let body = try? top.nestedContainer(keyedBy: Keys.self, forKey: .body) {
                    items = try body.decodeIfPresent(OneOrMany<EventInfoDTO>.self, forKey: .items)?.elements ?? []
                } else {
                    items = try top.decode(OneOrMany<EventInfoDTO>.self, forKey: .body).elements
                }
            } else if top.contains(.data) {
                items = try top.decode(OneOrMany<EventInfoDTO>.self, forKey: .data).elements
            } else if top.contains(.items) {
                items = try top.decode(OneOrMany<EventInfoDTO>.self, forKey: .items).elements
            } else if resultCode == nil {
                throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "neither header nor body/items found"))
            }
        }
    }

    /// Reads a JSON response file.
    /// - Throws: ``FeedError`` (`apiError`/`invalidKey` for a non-zero resultCode, `malformedBody`).
    public static func read(file: URL, head: [UInt8], _ body: (EventInfoDTO) throws -> Void) throws {
        let size = (try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int) ?? 0
        guard size <= maxBytes else {
            throw FeedError(.malformedBody, provider: ITSProvider.name,
                            message: "the JSON response is \(size) bytes, over the \(maxBytes)-byte limit for JSON bodies; narrow the source's bbox")
        }
        let data = try Data(contentsOf: file)
        let document: Document
        do {
            if head.first(where: { ![0x20, 0x09, 0x0A, 0x0D, 0xEF, 0xBB, 0xBF].contains($0) }) == UInt8(ascii: "[") {
                document = Document(items: try JSONDecoder().decode([EventInfoDTO].self, from: data))
            } else {
                document = try JSONDecoder().decode(Document.self, from: data)
            }
        } catch let error as DecodingError {
            throw FeedError(.malformedBody, provider: ITSProvider.name,
                            message: "malformed eventInfo JSON: \(describe(error)); nothing was stored")
        }
        guard document.resultCode != nil || !document.items.isEmpty else {
            throw FeedError(.unexpectedResponse, provider: ITSProvider.name,
                            message: "the JSON document has no header/resultCode and no items, so it cannot say there are no incidents; check the base URL")
        }
        try ITSProvider.checkResult(code: document.resultCode, message: document.resultMessage)
        for (index, var item) in document.items.enumerated() {
            item.position = index + 1
            try body(item)
        }
    }

    /// The error as one line: where in the document, and what was expected there.
    static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            let text = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
            return text.isEmpty ? "the document" : String(text.drop { $0 == "." })
        }
        switch error {
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty {
                let detail = (context.underlyingError as NSError?)?.userInfo[NSDebugDescriptionErrorKey] as? String
                return "not valid JSON (\(detail ?? context.debugDescription))"
            }
            return "\(path(context)): \(context.debugDescription)"
        case .keyNotFound(let key, let context): return "\(path(context)): missing \(key.stringValue)"
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            return "\(path(context)): expected \(context.codingPath.last?.stringValue == "items" || context.codingPath.last?.stringValue == "data" ? "a list of records or one record" : "a text or a number")"
        @unknown default: return "invalid JSON"
        }
    }
}

/// Reads `eventInfo` XML (`getType=xml`) through the SAX record reader, streaming. Both ITS
/// envelopes are accepted: `response/header{resultCode,resultMsg}/body/items/item*` and the
/// older `response/{datacount, data*}`. Text fields may be CDATA.
public enum ITSXMLReader {
    static let fieldNames = EventInfoDTO.CodingKeys.allCases.map(\.rawValue)
    static let envelopeNames = ["resultCode", "resultMsg"]

    public static let schema = XMLRecordSchema(
        recordElements: [XMLName("item"), XMLName("data")],
        fields: fieldNames.map { XMLName($0) },
        envelopeFields: envelopeNames.map { XMLName($0) } + DataGoKrGateway.envelopeFields)

    public static func dto(from record: XMLRecord) -> EventInfoDTO {
        EventInfoDTO(type: record[0], eventType: record[1], eventDetailType: record[2], startDate: record[3],
                     endDate: record[4], coordX: record[5], coordY: record[6], linkId: record[7], roadName: record[8],
                     roadNo: record[9], roadDrcType: record[10], lanesBlockType: record[11], lanesBlocked: record[12],
                     message: record[13], position: record.line)
    }

    static let format = XMLFeedFormat(provider: ITSProvider.name, schema: schema, dto: dto(from:),
                                      checkEnvelope: { envelope, _ in try checkEnvelope(envelope) })

    public static func read(file: URL, _ body: (EventInfoDTO) throws -> Void) throws {
        try format.read(file: file, body)
    }

    static func checkEnvelope(_ envelope: XMLEnvelope) throws {
        switch envelope.rootElement?.localName {
        case "response":
            try ITSProvider.checkResult(code: envelope[0], message: envelope[1])
        case DataGoKrGateway.rootElement:
            throw DataGoKrGateway.error(code: envelope[2], authMessage: envelope[3] ?? envelope[4], provider: ITSProvider.name)
        case let other:
            throw FeedError(.unexpectedResponse, provider: ITSProvider.name,
                            message: "expected an ITS <response> document but the root element is <\(other ?? "none")>; check the base URL")
        }
    }
}
