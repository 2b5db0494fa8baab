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
