import Foundation
import IncidentCore
import Testing

/// The filter catalogue (`IncidentFilter.Parameter`): what `(name, values)` pairs, such as a
/// command line's options or a URL's query parameters, make of an `IncidentQuery`, and the
/// errors that name the parameter.
@Suite("Filter catalogue")
struct FilterCatalogueTests {
    static let now = UTCInstant(secondsSince1970: 1_704_067_200)  // 2024-01-01T00:00:00Z
    /// Local times `yyyy-MM-dd HH:mm:ss` in Korea time (the CLI reads them with IncidentFeeds'
    /// strict layout parser, `ParsingContext.standard`); one canonical road.
    static let kst = IncidentFilter.ParsingContext(
        now: now, wallClock: { UTCInstant(rfc3339: $0.replacingOccurrences(of: " ", with: "T") + "Z")?.adding(seconds: -9 * 3600) },
        canonicalRoad: { $0 == "경부고속도로" ? "고속국도1호선" : nil })

    static func query(_ pairs: [(name: String, values: [String])]) throws -> IncidentQuery {
        try IncidentQuery(parameters: pairs, context: kst)
    }

    @Test("every parameter sets its filter; the filters come out in the stores' order")
    func everyParameter() throws {
        let query = try Self.query([
            ("search", ["사고  차선"]), ("radius", ["2.5km"]), ("near", ["37.2636,127.0286"]), ("bbox", ["126.9,37.2,127.1,37.4"]),
            ("road", ["경부고속도로"]), ("seen-since", ["2h"]), ("until", ["2024-01-01"]), ("since", ["2023-12-31 09:00"]),
            ("category", ["accident", "weather"]), ("source", ["gits", "its-seoul"]), ("status", ["active", "cleared"]),
        ])
        let box = try #require(BoundingBox(minLongitude: 126.9, minLatitude: 37.2, maxLongitude: 127.1, maxLatitude: 37.4))
        let point = try #require(Coordinate(latitude: 37.2636, longitude: 127.0286))
        #expect(query.filters == [
            .status([.active, .cleared]), .source(["gits", "its-seoul"]), .category([.accident, .weather]),
            .road(contains: "경부고속도로", reference: "고속국도1호선"),
            .started(since: UTCInstant(rfc3339: "2023-12-31T00:00:00Z"), until: UTCInstant(rfc3339: "2023-12-31T15:00:00Z")),
            .seenSince(Self.now.adding(seconds: -7200)), .boundingBox(box), .near(point, radiusMeters: 2500), .search("사고  차선"),
        ])
        #expect(try Self.query([]).filters.isEmpty)
        #expect(try Self.query([("active", ["true"])]).filters == [.status([.active])])
        #expect(try Self.query([("active", [""])]).activeOnly)
        #expect(try Self.query([("near", ["37.5,127"])]).radiusMeters == 5000, "the default radius")
    }

    /// Decomposed Hangul (as some clipboards give it) is read as the composed form stored.
    @Test("text values are trimmed and read in NFC")
    func normalizedText() throws {
        let decomposed = "\u{1100}\u{1167}\u{11BC}\u{1107}\u{116E}"  // 경부, as jamo
        #expect(try Self.query([("road", ["  \(decomposed) "])]).roadContains == "경부")
        #expect(try Self.query([("source", [" gits "])]).sources == ["gits"])
    }

    @Test("each fault names the parameter", arguments: [
        ([("sincee", ["2h"])], "sincee", "not a filter (filters: active, status, source, category, since, until, seen-since, road, bbox, near, radius, search)"),
        ([("since", ["yesterday"])], "since", "'yesterday' is not an instant (2023-03-21T05:13:00Z, 2023-03-21, a local time \"2023-03-21 14:13\", or a duration ago such as 2h)"),
        ([("since", ["36501d"])], "since", "'36501d' is too long: at most 36500d (100 years)"),
        ([("bbox", ["1,2,3"])], "bbox", "'1,2,3' is not minLon,minLat,maxLon,maxLat (e.g. 126.9,37.2,127.1,37.4)"),
        ([("near", ["95,127"])], "near", "'95,127' is outside WGS84 ranges (latitude -90…90, longitude -180…180)"),
        // Issue 20, point 14: longitude first (the --bbox and GeoJSON order), where only the swap is valid.
        ([("near", ["127.40,36.40"])], "near", "'127.40,36.40' is outside WGS84 ranges (LAT,LON: latitude -90…90 first); did you mean 36.40,127.40?"),
        ([("near", ["-122.42, 37.77"])], "near", "'-122.42, 37.77' is outside WGS84 ranges (LAT,LON: latitude -90…90 first); did you mean 37.77,-122.42?"),
        ([("near", ["127,190"])], "near", "'127,190' is outside WGS84 ranges (latitude -90…90, longitude -180…180)"),
        ([("bbox", ["37.2,126.9,37.4,127.1"])], "bbox",
         "'37.2,126.9,37.4,127.1' is not a WGS84 box (minLon,minLat,maxLon,maxLat: longitude first); did you mean 126.9,37.2,127.1,37.4?"),
        ([("radius", ["5 miles"]), ("near", ["37,127"])], "radius", "'5 miles' is not a distance (a number with m or km: 500m, 5km)"),
        ([("status", ["active", "gone"])], "status", "'gone' is not one of active, planned, suspended, ended, cleared"),
        ([("category", ["crash"])], "category", "'crash' is not one of \(IncidentCategory.allCases.map(\.rawValue).joined(separator: ", "))"),
        ([("road", ["  "])], "road", "'  ' is not a text"),
        ([("active", ["yes"])], "active", "'yes' is not true (give active alone, or leave it out for every incident; status=planned,suspended,ended,cleared for those not in force)"),
        // Neither "no filter" nor "only those not active": one meaning for the CLI and the server (issue 21).
        ([("active", ["false"])], "active", "'false' is not true (give active alone, or leave it out for every incident; status=planned,suspended,ended,cleared for those not in force)"),
        ([("road", ["a"]), ("road", ["b"])], "road", "given 2 times; give it once"),
        ([("since", ["2h", "3h"])], "since", "given 2 times; give it once"),
        ([("active", ["true"]), ("status", ["ended"])], "active", "the same as status active; give one or the other"),
        ([("radius", ["1km"])], "radius", "needs near (a point lat,lon)"),
        // An empty window (walk finding 27): durations are "that long ago", so since 2h until 7d is empty.
        ([("since", ["2h"]), ("until", ["7d"])], "until", emptyWindow("2023-12-25T00:00:00Z", "2023-12-31T22:00:00Z")),
        ([("since", ["2024-01-02T00:00:00Z"]), ("until", ["2024-01-01T00:00:00Z"])], "until", emptyWindow("2024-01-01T00:00:00Z", "2024-01-02T00:00:00Z")),
        ([("since", ["2024-01-01T09:00:00+09:00"]), ("until", ["2024-01-01T00:00:00Z"])], "until", emptyWindow("2024-01-01T00:00:00Z", "2024-01-01T00:00:00Z")),
    ] as [([(name: String, values: [String])], String, String)])
    func faults(pairs: [(name: String, values: [String])], parameter: String, reason: String) {
        #expect(throws: QueryParameterError(parameter: parameter, reason: reason)) { try Self.query(pairs) }
    }

    /// The reason an empty start window is refused.
    static func emptyWindow(_ until: String, _ since: String) -> String {
        "\(until) is not after since (\(since)): no start time is in that window "
            + "(a duration means that long ago: since 7d until 2h is the 7 days before the last 2 hours)"
    }

    @Test("the catalogue: unique names, an example that parses, a placeholder for each value")
    func catalogue() throws {
        let parameters = IncidentFilter.Parameter.allCases
        #expect(Set(parameters.map(\.name)).count == parameters.count)
        for parameter in parameters {
            #expect(!parameter.help.isEmpty && !parameter.example.isEmpty)
            #expect(parameter.kind == .flag ? parameter.placeholder.isEmpty : !parameter.placeholder.isEmpty)
            #expect(parameter.choices.map { $0.contains(parameter.example) } ?? true)
            let pairs = [(name: parameter.name, values: [parameter.example])] + (parameter == .radius ? [("near", ["37.5,127"])] : [])
            #expect(try Self.query(pairs).filters.count == 1, "\(parameter.name)=\(parameter.example)")
        }
    }
}
