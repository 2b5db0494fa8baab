import Foundation
import TestSupport
import Testing

/// Issue 19, point 4 ("not yet, or not now"): a record of any provider that starts in the
/// future is `planned`, a DATEX II record whose `validityStatus` is `suspended` is `suspended`
/// (and one that is `planned` without a start is `planned`), in every output format, `stats`,
/// the map and `--status`, on both stores. The future here is 2099; the past, 2024.
@Suite("End to end: planned and suspended incidents")
struct NotInForceEndToEndTests {
    /// A provider's document holding a record started in 2024 (`now`) and one starting in 2099
    /// (`later`); DATEX II adds a suspended record and a planned one with no start.
    struct Case: Sendable, CustomTestStringConvertible {
        var provider: String
        var file: String
        var body: String
        /// External id (ITS, whose ids are built from several fields: description) → expected status.
        var expected: [String: String]
        var key = "external_id"
        var testDescription: String { provider }
    }

    static let cases: [Case] = [
        Case(provider: "gits", file: "gits.xml", body: """
            <ServiceResult><msgHeader><headerCd>0</headerCd><headerMsg>OK</headerMsg><itemCount>2</itemCount></msgHeader><msgBody>
            <itemList><linkId>1</linkId><regSeq>now</regSeq><startDate>2024-01-01 00:02:00</startDate><inciDesc>[사고] 추돌</inciDesc>
              <inciPlace1>경부고속도로</inciPlace1><coord_x>127.10</coord_x><coord_y>37.27</coord_y></itemList>
            <itemList><linkId>2</linkId><regSeq>later</regSeq><startDate>2099-01-01 09:00:00</startDate><inciDesc>[공사] 보수</inciDesc>
              <inciPlace1>영동고속도로</inciPlace1><coord_x>127.18</coord_x><coord_y>37.26</coord_y></itemList>
            </msgBody></ServiceResult>
            """, expected: ["now": "active", "later": "planned"]),
        Case(provider: "its", file: "its.json", body: """
            {"header":{"resultCode":0,"resultMsg":"success"},"body":{"totalCount":2,"items":[
             {"type":"고속도로","eventType":"교통사고","startDate":"20240101001500","coordX":127.06,"coordY":37.21,"linkId":"11","roadName":"경부선","message":"now"},
             {"type":"고속도로","eventType":"공사","startDate":"20990101090000","coordX":127.07,"coordY":37.22,"linkId":"12","roadName":"경부선","message":"later"}]}}
            """, expected: ["now": "active", "later": "planned"], key: "description"),
        Case(provider: "open511", file: "open511.json", body: """
            {"events": [
             {"id": "test.org/now", "status": "ACTIVE", "event_type": "INCIDENT", "headline": "now",
              "schedule": {"intervals": ["2024-03-01T15:00:00Z/"]}, "geography": {"type": "Point", "coordinates": [-75.7, 45.4]}},
             {"id": "test.org/later", "status": "ACTIVE", "event_type": "CONSTRUCTION", "headline": "later",
              "schedule": {"intervals": ["2099-03-01T15:00:00Z/2099-03-02T15:00:00Z"]}, "geography": {"type": "Point", "coordinates": [-75.6, 45.5]}}],
             "pagination": {"offset": 0}, "meta": {"version": "v1"}}
            """, expected: ["test.org/now": "active", "test.org/later": "planned"]),
        Case(provider: "wzdx", file: "wzdx.json", body: """
            {"feed_info": {"update_date": "2024-06-01T12:00:00Z", "publisher": "TestDOT", "version": "4.2", "data_sources": [{"data_source_id": "1", "organization_name": "TestDOT"}]},
             "type": "FeatureCollection", "features": [
              {"id": "wz-now", "type": "Feature", "properties": {"core_details": {"event_type": "work-zone", "data_source_id": "1", "road_names": ["I-25"], "direction": "southbound"},
               "start_date": "2024-06-01T00:00:00Z", "vehicle_impact": "some-lanes-closed"}, "geometry": {"type": "LineString", "coordinates": [[-104.9, 39.7], [-104.9, 39.6]]}},
              {"id": "wz-later", "type": "Feature", "properties": {"core_details": {"event_type": "work-zone", "data_source_id": "1", "road_names": ["I-70"], "direction": "eastbound"},
               "start_date": "2099-06-01T00:00:00Z", "end_date": "2099-06-03T00:00:00Z", "vehicle_impact": "all-lanes-closed"},
               "geometry": {"type": "LineString", "coordinates": [[-105.0, 39.7], [-105.1, 39.7]]}}]}
            """, expected: ["wz-now": "active", "wz-later": "planned"]),
        Case(provider: "datex2", file: "datex2.xml", body: """
            <d2LogicalModel xmlns="http://datex2.eu/schema/2/2_0" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" modelBaseVersion="2">
              <payloadPublication xsi:type="SituationPublication" lang="en"><publicationTime>2024-03-01T12:00:00Z</publicationTime>
                <situation id="S" version="1">
            \(datexRecord("now", status: "active", start: "2024-02-05T06:00:00Z"))
            \(datexRecord("later", status: "planned", start: "2099-02-05T06:00:00Z"))
            \(datexRecord("unscheduled", status: "planned", start: nil))
            \(datexRecord("paused", status: "suspended", start: "2024-02-05T06:00:00Z"))
            \(datexRecord("timed", status: "definedByValidityTimeSpec", start: "2099-02-05T06:00:00Z"))
                </situation>
              </payloadPublication>
            </d2LogicalModel>
            """, expected: ["S/now": "active", "S/later": "planned", "S/unscheduled": "planned", "S/paused": "suspended", "S/timed": "planned"]),
    ]

    static func datexRecord(_ id: String, status: String, start: String?) -> String {
        """
              <situationRecord id="\(id)" version="1" xsi:type="MaintenanceWorks">
                <situationRecordCreationTime>2024-02-01T08:00:00Z</situationRecordCreationTime>
                <situationRecordVersionTime>2024-02-01T08:00:00Z</situationRecordVersionTime>
                <probabilityOfOccurrence>certain</probabilityOfOccurrence>
                <validity><validityStatus>\(status)</validityStatus><validityTimeSpecification>\
        \(start.map { "<overallStartTime>\($0)</overallStartTime>" } ?? "")</validityTimeSpecification></validity>
                <groupOfLocations xsi:type="Point"><locationForDisplay><latitude>60.1</latitude><longitude>24.9</longitude></locationForDisplay></groupOfLocations>
              </situationRecord>
        """
    }

    @Test("ingest --file of each provider into SQLite: the statuses in list --format json, --status, --active and stats", arguments: cases)
    func sqlite(_ example: Case) async throws {
        let ws = try Workspace()
        try await Self.check(example, database: ws.database, in: ws)
    }

    @Test("ingest --file of each provider into PostgreSQL: the statuses in list --format json, --status, --active and stats", arguments: cases)
    func postgres(_ example: Case) async throws {
        let ws = try Workspace()
        try await PostgresDatabase.with { database in
            try await Self.check(example, database: database.uri, in: ws)
        }
    }

    static func check(_ example: Case, database: String, in ws: Workspace) async throws {
        let file = try ws.write(example.file, example.body)
        let ingest = try await run("incident-scheduler", ["ingest", "--source", example.provider, "--file", file, "--complete", "--database", database])
        try #require(ingest.status == 0, "\(ingest.stderr)")
        func listed(_ arguments: [String]) async throws -> [String: String] {
            let result = try await run("incidents", ["list", "--database", database, "--format", "json"] + arguments)
            #expect(result.status == 0, "\(result.stderr)")
            let rows = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]])
            return Dictionary(uniqueKeysWithValues: rows.map { ($0.text(example.key) ?? "", $0.text("status") ?? "") })
        }
        #expect(try await listed([]) == example.expected)
        for status in ["active", "planned", "suspended"] {
            #expect(try await listed(["--status", status]) == example.expected.filter { $0.value == status }, "--status \(status)")
        }
        #expect(try await listed(["--active"]) == example.expected.filter { $0.value == "active" })
        #expect(try await listed(["--status", "planned", "--status", "suspended"]) == example.expected.filter { $0.value != "active" })

        let stats = try await run("incidents", ["stats", "--database", database, "--format", "json"])
        #expect(stats.status == 0, "\(stats.stderr)")
        let totals = try #require(try JSONSerialization.jsonObject(with: Data(stats.stdout.utf8)) as? [String: Any])
        for status in ["active", "planned", "suspended", "ended", "cleared"] {
            #expect(totals[status] as? Int == example.expected.values.filter { $0 == status }.count, "stats \(status): \(stats.stdout)")
        }
        let text = try await run("incidents", ["stats", "--database", database])
        let counts = { (status: String) in example.expected.values.filter { $0 == status }.count }
        #expect(text.stdout.hasPrefix("total \(example.expected.count)   active \(counts("active"))   planned \(counts("planned"))   "
                                      + "suspended \(counts("suspended"))   ended 0   cleared 0\n"), "\(text.stdout)")
    }

    @Test("the DATEX II statuses in every list format, stats --by status and the map")
    func everyOutput() async throws {
        let ws = try Workspace()
        let example = try #require(Self.cases.last)
        let file = try ws.write(example.file, example.body)
        let ingest = try await run("incident-scheduler", ["ingest", "--source", "datex2", "--file", file, "--complete", "--database", ws.database])
        try #require(ingest.status == 0, "\(ingest.stderr)")
        for format in ["table", "ndjson", "csv", "csv-excel", "geojson"] {
            let result = try await run("incidents", ["list", "--database", ws.database, "--format", format])
            #expect(result.status == 0, "\(result.stderr)")
            for status in Set(example.expected.values) {
                #expect(result.stdout.contains(status), "\(format) shows no \(status): \(result.stdout.prefix(1500))")
            }
        }
        let ndjson = try await run("incidents", ["list", "--database", ws.database, "--format", "ndjson"])
        let objects = try ndjson.stdout.split(separator: "\n").map { try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
        #expect(Dictionary(uniqueKeysWithValues: objects.map { ($0.text("external_id") ?? "", $0.text("status") ?? "") }) == example.expected)
        let geojson = try await run("incidents", ["list", "--database", ws.database, "--format", "geojson"])
        let collection = try #require(try JSONSerialization.jsonObject(with: Data(geojson.stdout.utf8)) as? [String: Any])
        let features = try #require(collection["features"] as? [[String: Any]])
        #expect(Dictionary(uniqueKeysWithValues: features.compactMap { $0["properties"] as? [String: Any] }
            .map { ($0.text("external_id") ?? "", $0.text("status") ?? "") }) == example.expected)
        let csv = try await run("incidents", ["list", "--database", ws.database, "--format", "csv", "--order", "source"])
        let header = try #require(csv.stdout.split(separator: "\r\n").first?.split(separator: ",").map(String.init))
        let statusColumn = try #require(header.firstIndex(of: "status"), "\(header)")
        let idColumn = try #require(header.firstIndex(of: "external_id"))
        let rows = csv.stdout.split(separator: "\r\n").dropFirst().map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
        #expect(Dictionary(uniqueKeysWithValues: rows.map { ($0[idColumn], $0[statusColumn]) }) == example.expected)

        let byStatus = try await run("incidents", ["stats", "--by", "status", "--database", ws.database, "--format", "json"])
        let grouped = try #require(try JSONSerialization.jsonObject(with: Data(byStatus.stdout.utf8)) as? [String: Any])
        let groups = try #require(grouped["groups"] as? [[String: Any]])
        #expect(Dictionary(uniqueKeysWithValues: groups.map { ($0.text("status") ?? "", $0["count"] as? Int ?? 0) })
                == ["active": 1, "planned": 3, "suspended": 1])

        let map = ws.directory.appendingPathComponent("map.html").path
        let drawn = try await run("incidents", ["map", "--database", ws.database, "--output", map, "--tiles", "none"])
        #expect(drawn.status == 0, "\(drawn.stderr)")
        let page = try String(contentsOfFile: map, encoding: .utf8)
        for (id, status) in example.expected {
            #expect(page.contains("\"status\": \"\(status)\""), "\(id)")
        }
        #expect(page.contains(#"incident.status === "active""#))
    }
}
