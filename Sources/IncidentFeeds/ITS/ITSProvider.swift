import Foundation
import IncidentCore
import IncidentNetworking

/// Korea's national ITS `eventInfo` (돌발상황정보), JSON or XML.
///
/// Facts (ITS open API guide; recorded items of 2022-12-20): key parameter `apiKey`; every
/// value may be a string or a number; `startDate`/`endDate` are `yyyyMMddHHmmss` Korea time;
/// `coordX` is the WGS84 longitude, `coordY` the latitude; a bad key is HTTP 401 with
/// `resultCode` 4005. The reader is chosen by sniffing the body, not by `getType`.
public enum ITSProvider: FeedProvider {
    public static let name = "its"
    static let roadTypes = ["all", "ex", "its", "loc", "sgg", "etc"]
    static let eventTypes = ["all", "cor", "acc", "wea", "ete", "dis", "etc"]

    public static func validate(_ source: SourceDefinition) throws {
        _ = try parameters(for: source)
    }

    static func parameters(for source: SourceDefinition) throws -> ITSRouter.EventInfoParameters {
        var p = ITSRouter.EventInfoParameters()
        let o = source.options
        if let bbox = o.bbox {
            guard bbox.count == 4, bbox.allSatisfy(\.isFinite),
                  (-180...180).contains(bbox[0]), (-180...180).contains(bbox[2]),
                  (-90...90).contains(bbox[1]), (-90...90).contains(bbox[3]),
                  bbox[0] < bbox[2], bbox[1] < bbox[3] else {
                throw FeedError(.configuration, provider: name,
                                message: "bbox must be [minX, minY, maxX, maxY] in WGS84 degrees (longitude, latitude) with min < max, e.g. [126.76, 37.41, 127.18, 37.70]")
            }
            p.bbox = bbox
        }
        if let value = o.roadType {
            guard roadTypes.contains(value) else {
                throw FeedError(.configuration, provider: name, message: "type must be one of \(roadTypes.joined(separator: ", "))")
            }
            p.type = value
        }
        if let value = o.eventType {
            guard eventTypes.contains(value) else {
                throw FeedError(.configuration, provider: name, message: "eventType must be one of \(eventTypes.joined(separator: ", "))")
            }
            p.eventType = value
        }
        if let value = o.format {
            guard ["json", "xml"].contains(value) else {
                throw FeedError(.configuration, provider: name, message: "format must be json or xml")
            }
            p.getType = value
        }
        return p
    }

    public static func router(for source: SourceDefinition) throws -> any Router {
        guard let key = source.key else {
            throw FeedError(.configuration, provider: name, message: "source '\(source.name)' has no API key: set keyEnv or keyFile")
        }
        return ITSRouter.eventInfo(key: key, parameters: try parameters(for: source), baseURL: source.baseURL)
    }

    public static func read(file: URL, contentType: String?, source: String, _ body: (FeedRecord) throws -> Void) throws -> ResponseVerdict {
        let (kind, head) = try BodySniffer.sniff(file)
        switch kind {
        case .json:
            try ITSJSONReader.read(file: file, head: head) { try body(.incident(try ITSMapper.incident(from: $0, source: source))) }
        case .xml:
            try ParsePipeline.run(produce: { emit in try ITSXMLReader.read(file: file, emit) },
                                  consume: { dto in try body(.incident(try ITSMapper.incident(from: dto, source: source))) })
        case .html, .empty, .other:
            throw BodySniffer.unexpected(kind, head: head, contentType: contentType, provider: name,
                                         expected: "ITS eventInfo JSON or XML")
        }
        return .complete
    }

    /// HTTP 401 is ITS's answer to a bad key (resultCode 4005): a typed invalid-key error.
    public static func classify(_ error: NetworkError) -> any Error {
        guard error.statusCode == 401 else { return classifyQuota(error, provider: name) }
        let code = (error.bodyExcerpt?.contains("4005") ?? false) ? "4005" : nil
        return FeedError(.invalidKey, provider: name, code: code,
                         message: "the ITS API refused the key (HTTP 401\(code.map { ", resultCode \($0)" } ?? "")): check the apiKey in keyEnv/keyFile")
    }

    /// `resultCode` absent, `0`, `"0"` or `"00"` is success; 4005 is an invalid key; any other
    /// code is an API error carrying the code and message.
    static func checkResult(code: String?, message: String?) throws {
        guard let code, Int(code) != 0 else { return }
        if code == "4005" {
            throw FeedError(.invalidKey, provider: name, code: code,
                            message: "the ITS API refused the key (resultCode 4005, \(message ?? "no message")): check the apiKey in keyEnv/keyFile")
        }
        throw FeedError(.apiError, provider: name, code: code,
                        message: "ITS API error resultCode=\(code) (\(message ?? "no message")); nothing was stored")
    }
}

/// Maps an ITS ``EventInfoDTO`` to an `Incident`.
///
/// - External id (the feed has none): `linkId:startDate:eventDetailType`, e.g.
///   `1870199600:20221220093317:작업`: the link, the minute-exact start and the kind identify
///   an event and do not change while it lasts (its message, lanes and end do). Without a
///   `linkId`, the coordinates stand in: `127.4226,36.4137:20221220093317:작업`.
/// - Category from `eventDetailType`, then `eventType` (``CategoryClassifier``); the provider's
///   text is kept as `eventType/eventDetailType` (or one of them when equal).
/// - Road `roadName` (else `roadNo`), direction `roadDrcType`, restriction `lanesBlocked`
///   (else `lanesBlockType`), description `message`, WGS84 `coordY`/`coordX`.
/// - `startDate`/`endDate` `yyyyMMddHHmmss` Korea time → UTC.
public enum ITSMapper {
    public static func incident(from dto: EventInfoDTO, source: String) throws -> Incident {
        do throws(RecordProblem) {
            guard let start = dto.startDate else { throw RecordProblem(text: "has no startDate") }
            let coordinate = try WireValues.coordinate(x: dto.coordX, y: dto.coordY, names: ("coordX", "coordY"))
            guard let place = dto.linkId ?? coordinate.map({ "\(ITSRouter.degrees($0.longitude)),\(ITSRouter.degrees($0.latitude))" }) else {
                throw RecordProblem(text: "has neither linkId nor coordinates to identify it")
            }
            let kind = dto.eventDetailType ?? dto.eventType ?? "-"
            let label: String? = switch (dto.eventType, dto.eventDetailType) {
            case let (type?, detail?) where type != detail: "\(type)/\(detail)"
            case let (type, detail): type ?? detail
            }
            return Incident(
                source: source, externalID: "\(place):\(start):\(kind)",
                category: CategoryClassifier.category(of: dto.eventDetailType) ?? CategoryClassifier.category(of: dto.eventType) ?? .other,
                providerCategory: label, description: dto.message, road: dto.roadName ?? dto.roadNo,
                direction: dto.roadDrcType, restriction: dto.lanesBlocked ?? dto.lanesBlockType,
                coordinate: coordinate, linkID: dto.linkId,
                startedAt: try WireValues.koreaTime(start, layout: .compact, field: "startDate"),
                endedAt: try WireValues.koreaTime(dto.endDate, layout: .compact, field: "endDate"))
        } catch {
            throw invalid(dto, error.text)
        }
    }

    static func invalid(_ dto: EventInfoDTO, _ problem: String) -> FeedError {
        FeedError(.invalidRecord, provider: ITSProvider.name,
                  message: "the eventInfo record at position \(dto.position) \(problem); nothing was stored")
    }
}
