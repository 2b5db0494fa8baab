import Foundation
import IncidentCore
import IncidentJSON
import IncidentNetworking

/// WZDx work-zone feeds (USDOT Work Zone Data Exchange, github.com/usdot-jpo-ode/wzdx): a
/// GeoJSON `FeatureCollection` of road events, 4.x with `feed_info` (`update_date`,
/// `publisher`, `version`, `data_sources[]`), 2.0 and 3.x with `road_event_feed_info`.
///
/// Facts (the specification; CDOT's production feeds of 2023-05-22, 87 features, and
/// 2025-08-13, 279 features): one document holds the whole feed (no paging); statewide feeds
/// reach tens of MB, read here while streaming in bounded memory; auth depends on the
/// publisher, usually a key query parameter (CDOT: `apiKey`).
///
/// Completeness: the document must hold `features` (a document without it is refused, never
/// read as "no work zones") and say it is a WZDx feed by its `feed_info` or
/// `road_event_feed_info` (without it the features are stored and nothing is cleared).
public enum WZDxProvider: FeedProvider {
    public static let name = "wzdx"

    /// The query parameter names publishers use for the key.
    static let keyParameters = ["apiKey", "api_key", "key"]
    /// `keyParameter`: which one this publisher wants.
    public static let keyParameter = ProviderOption.choice(
        "keyParameter", keyParameters, default: "apiKey",
        help: "the query parameter that carries the key, when the source has one (CDOT: `apiKey`)")

    public static let options: [any ProviderOptionDeclaration] = [keyParameter]
    public static let keyParameterNames = keyParameters
    /// The key is optional: sent when the source has one.
    public static let requiresKey = false

    /// Record path `features[*]`; envelope `feed_info`, `road_event_feed_info`, `type`.
    static let schema = JSONRecordSchema(recordPaths: [["features", "*"]],
                                         envelopePaths: [["feed_info"], ["road_event_feed_info"], ["type"]], wrapperKey: nil)

    /// `GET <baseURL>?apiKey=KEY`: a source gives the feed's URL as `baseURL`; the key, when it
    /// has one, goes under its `keyParameter`.
    /// - Throws: ``FeedError`` `configuration` without a `baseURL`.
    public static func router(for source: SourceDefinition) throws -> any Router {
        guard let baseURL = source.baseURL else {
            throw FeedError(.configuration, provider: name,
                            message: "source '\(source.name)' has no baseURL: give the WZDx feed's URL, e.g. https://data.cotrip.org/api/v1/wzdx")
        }
        return EndpointRouter(baseURL: baseURL, query: source.key.map { [.key(source.options[keyParameter], $0)] } ?? [],
                              accept: "application/geo+json, application/json", sampleResponse: sampleResponse)
    }

    /// One work zone, for stubbed tests.
    static let sampleResponse =
        StubResponse(headers: ["Content-Type": "application/geo+json"], text: """
            {"feed_info":{"publisher":"TestDOT","version":"4.2","update_date":"2024-01-01T00:00:00Z"},"type":"FeatureCollection",\
            "features":[{"id":"wz-1","type":"Feature","properties":{"core_details":{"event_type":"work-zone","data_source_id":"1",\
            "road_names":["I-80"],"direction":"westbound","description":"Lane closed"},"start_date":"2024-01-01T00:00:00Z",\
            "end_date":"2024-01-02T00:00:00Z","is_start_date_verified":false,"is_end_date_verified":false,\
            "vehicle_impact":"some-lanes-closed","lanes":[]},"geometry":{"type":"LineString","coordinates":[[-93.6,41.6],[-93.5,41.6]]}}]}
            """)

    public static func read(file: URL, contentType: String?, source: String, _ body: (FeedRecord) throws -> Void) throws -> ResponseVerdict {
        let (kind, head) = try BodySniffer.sniff(file)
        guard kind == .json else {
            throw BodySniffer.unexpected(kind, head: head, contentType: contentType, provider: name, expected: "a WZDx GeoJSON feed")
        }
        return try format.read(file: file, contentType: contentType, map: { WZDxMapper.record($0, source: source) }, body)
    }

    /// When the feed says it was generated: 4.x `feed_info.update_date`, 3.x
    /// `road_event_feed_info.update_date`, 2.0 `road_event_feed_info.feed_update_date` (the
    /// specification's schemas 2.0, 3.1 and 4.2; CDOT's feed: `2023-05-22T23:40:06Z`). A value
    /// that is not an ISO 8601 time is a warning and orders nothing.
    static func readPublication(_ envelope: JSONEnvelope, into tally: inout ResponseTally) {
        let candidates = [(envelope[0], "feed_info.update_date", "update_date"), (envelope[1], "road_event_feed_info.update_date", "update_date"),
                          (envelope[1], "road_event_feed_info.feed_update_date", "feed_update_date")]
        guard let (value, field) = candidates.lazy.compactMap({ info, field, key in info?[key].map { ($0, field) } }).first,
              !value.isNull else { return }
        if let text = value.string, let instant = UTCInstant(iso8601: text, utcOffsetSeconds: 0) {
            tally.publishedAt = instant
        } else {
            tally.warnings.append("\(field) \(String(value.description.prefix(40))) is not an ISO 8601 time, so this feed's age cannot be checked")
        }
    }

    /// Features of a WZDx feed: `feed_info` (or `road_event_feed_info`) says it is one; a
    /// document of another GeoJSON type, or without `features`, is refused.
    static let format = JSONFeedFormat(
        provider: name, schema: schema, successField: "feed_info", dto: WZDxRoadEvent.init(record:),
        inspect: { envelope, tally in
            if let type = envelope[2], type.string != "FeatureCollection" {
                throw FeedError(.unexpectedResponse, provider: name,
                                message: "the JSON document's type is \(String(type.description.prefix(40))), not FeatureCollection: it is not a WZDx feed; check the base URL")
            }
            tally.confirmedSuccess = (envelope[0] ?? envelope[1])?.object != nil
            readPublication(envelope, into: &tally)
        },
        inspectRecordLists: { summary, _ in
            guard summary.recordPathsFound[0] > 0 else {
                throw FeedError(.unexpectedResponse, provider: name,
                                message: "the JSON document has no features list, so it is not a WZDx feed and cannot say there are no work zones; check the base URL and the key")
            }
            // GeoJSON (RFC 7946 §3.3): "features" is an array; null, {} or "" says nothing.
            guard summary.recordListsAsArrays[0] > 0 else {
                throw FeedError(.unexpectedResponse, provider: name,
                                message: "the JSON document's features is not a list (RFC 7946 §3.3 requires an array), so it cannot say there are no work zones; nothing was stored or cleared")
            }
        })
}
