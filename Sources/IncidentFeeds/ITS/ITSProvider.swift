import Foundation
import IncidentCore
import IncidentNetworking

/// Korea's national ITS `eventInfo` (돌발상황정보), JSON or XML.
///
/// Facts (ITS open API guide; recorded items of 2022-12-20): key parameter `apiKey`; every
/// value may be a string or a number; `startDate`/`endDate` are `yyyyMMddHHmmss` Korea time;
/// `coordX` is the WGS84 longitude, `coordY` the latitude; a bad key is HTTP 401 with
/// `resultCode` 4005, a used-up daily limit `resultCode` 4001 (``KoreanAPIEnvelope``). The
/// reader is chosen by sniffing the body, not by `getType` (``ITSReaders``).
public enum ITSProvider: FeedProvider {
    public static let name = "its"

    /// `bbox`: the area asked for, WGS84 `[minX, minY, maxX, maxY]` (longitude, latitude).
    public static let bbox = ProviderOption<[Double]>(
        "bbox", default: [124.0, 33.0, 132.0, 39.0],
        help: "the area asked for: `[minX, minY, maxX, maxY]`, WGS84 longitude/latitude degrees (default: all of Korea)",
        accepted: "4 numbers") { box in
            guard box.count == 4, (-180...180).contains(box[0]), (-180...180).contains(box[2]),
                  (-90...90).contains(box[1]), (-90...90).contains(box[3]), box[0] < box[2], box[1] < box[3] else {
                return "must be [minX, minY, maxX, maxY] in WGS84 degrees (longitude, latitude) with min < max, e.g. [126.76, 37.41, 127.18, 37.70]"
            }
            return nil
        }
    /// `type`: the road class.
    public static let roadType = ProviderOption.choice(
        "type", ["all", "ex", "its", "loc", "sgg", "etc"], default: "all",
        help: "road class (ex: expressways, its: national roads)")
    /// `eventType`: the kind of event.
    public static let eventType = ProviderOption.choice(
        "eventType", ["all", "cor", "acc", "wea", "ete", "dis", "etc"], default: "all",
        help: "kind of event (cor: construction, acc: accident, wea: weather)")
    /// `format`: the response format asked for (`getType`); the answer is read by sniffing.
    public static let format = ProviderOption.choice(
        "format", ["json", "xml"], default: "json",
        help: "response format asked for (`getType`); the answer is read whatever format it comes in")

    public static let options: [any ProviderOptionDeclaration] = [bbox, roadType, eventType, format]
    public static let keyParameterNames = [ITSRouter.keyParameter]

    public static func router(for source: SourceDefinition) throws -> any Router {
        let key = try source.requiredKey()
        let o = source.options
        let parameters = ITSRouter.EventInfoParameters(type: o[roadType], eventType: o[eventType], bbox: o[bbox], getType: o[format])
        return ITSRouter.eventInfo(key: key, parameters: parameters, baseURL: source.baseURL)
    }

    public static func read(file: URL, contentType: String?, source: String, _ body: (FeedRecord) throws -> Void) throws -> ResponseVerdict {
        let (kind, head) = try BodySniffer.sniff(file)
        let map = { @Sendable (dto: EventInfoDTO) in ITSMapper.record(from: dto, source: source) }
        switch kind {
        case .json:
            return try ITSReaders.json.read(file: file, contentType: contentType, map: map, body)
        case .xml:
            return try ITSReaders.xml.read(file: file, contentType: contentType, map: map, body)
        case .html, .empty, .gzip, .other:
            throw BodySniffer.unexpected(kind, head: head, contentType: contentType, provider: name,
                                         expected: "ITS eventInfo JSON or XML")
        }
    }

    /// HTTP 401 is ITS's answer to a bad key (resultCode 4005): a typed invalid-key error.
    public static func classify(_ error: NetworkError) -> any Error {
        guard error.statusCode == 401 else { return classifyQuota(error, provider: name) }
        let code = (error.bodyExcerpt?.contains("4005") ?? false) ? "4005" : nil
        return FeedError(.invalidKey, provider: name, code: code,
                         message: "the ITS API refused the key (HTTP 401\(code.map { ", resultCode \($0)" } ?? ""))")
    }
}
