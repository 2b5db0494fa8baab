import Foundation
import IncidentCore
import IncidentSQLite
import TestSupport

/// A small database with fixed contents and fixed times, for golden-output tests of `incidents`.
enum QueryFixture {
    static let t0 = UTCInstant(rfc3339: "2024-01-01T00:00:00Z")!
    static let t1 = UTCInstant(rfc3339: "2024-01-01T01:00:00Z")!

    static func instant(_ text: String) -> UTCInstant? { UTCInstant(rfc3339: text) }

    /// Four GITS incidents and two ITS ones; at t1 one GITS incident changes and one clears.
    static let first: [Incident] = [
        Incident(source: "gits", externalID: "202401010001", category: .accident, providerCategory: "사고",
                 description: "[사고] 경부고속도로 (서울방향) 수원IC → 신갈JC  2차로 통제, 추돌사고", road: "경부고속도로",
                 location: "(서울방향) 수원IC → 신갈JC", restriction: "2차로",
                 coordinate: Coordinate(latitude: 37.2636, longitude: 127.0286), linkID: "1000012345",
                 startedAt: instant("2023-12-31T23:10:00Z"), confirmedAt: instant("2023-12-31T23:12:00Z"),
                 expectedEndAt: instant("2024-01-01T02:00:00Z")),
        Incident(source: "gits", externalID: "202401010002", category: .roadwork, providerCategory: "공사",
                 description: "[공사] 영동고속도로 (강릉방향) 마성IC → 용인IC  갓길 통제, \"방음벽\" 보수", road: "영동고속도로",
                 location: "(강릉방향) 마성IC → 용인IC", restriction: "갓길",
                 coordinate: Coordinate(latitude: 37.26, longitude: 127.18), startedAt: instant("2023-12-31T14:00:00Z")),
        Incident(source: "gits", externalID: "202401010003", category: .breakdown, providerCategory: "차량고장",
                 description: "[차량고장] 강변북로 (구리방향) 잠실대교 → 잠실철교  4차로 통제, 차량고장", road: "강변북로",
                 location: "(구리방향) 잠실대교 → 잠실철교", restriction: "4차로",
                 coordinate: Coordinate(latitude: 37.52739696162846, longitude: 127.08203126), startedAt: instant("2023-12-31T05:13:00Z")),
        Incident(source: "gits", externalID: "202401010004", category: .other, description: "낙하물 신고, 확인 중",
                 road: "국도1호선", startedAt: instant("2023-12-30T23:59:59Z")),
        Incident(source: "its-seoul", externalID: "1100123400:20240101001500:추돌사고", category: .accident,
                 providerCategory: "교통사고/추돌사고", description: "(1차로)승용차 3중 추돌사고 처리중", road: "경부선",
                 direction: "종점", restriction: "1차로 차단", coordinate: Coordinate(latitude: 37.2105, longitude: 127.0651),
                 linkID: "1100123400", startedAt: instant("2023-12-31T15:15:00Z")),
        Incident(source: "its-seoul", externalID: "128.152,37.662:20231231233000:결빙", category: .weather,
                 providerCategory: "기상/결빙", description: "노면 결빙 주의", road: "6", direction: "시점방향", restriction: "전면",
                 coordinate: Coordinate(latitude: 37.662, longitude: 128.152), startedAt: instant("2023-12-31T14:30:00Z"),
                 endedAt: instant("2023-12-31T18:00:00Z")),
    ]

    struct Producer {
        let incidents: [Incident]
        var rejected: [RejectedRecord] = []
        var verdict = ResponseVerdict.complete
        func callAsFunction(_ sink: any PollSink) throws -> ResponseVerdict {
            for i in incidents { try sink.upsert(i) }
            for r in rejected { try sink.reject(r) }
            return verdict
        }
    }

    /// Writes the fixture database at `path`.
    static func build(at path: String) throws {
        let store = try SQLiteStore(path: path, clock: .fixed(t0))
        let gits = first.filter { $0.source == "gits" }
        _ = try store.ingest(PollContext(source: "gits", startedAt: t0), Producer(incidents: gits).callAsFunction)
        _ = try store.ingest(PollContext(source: "its-seoul", startedAt: t0),
                             Producer(incidents: first.filter { $0.source == "its-seoul" }).callAsFunction)
        var changed = gits[0]
        changed.restriction = "1,2차로"
        changed.description = "[사고] 경부고속도로 (서울방향) 수원IC → 신갈JC  1,2차로 통제, 추돌사고"
        let later = [changed, gits[1], gits[3]]  // 0003 (잠실) is no longer listed: cleared at t1
        let laterStore = try SQLiteStore(path: path, clock: .fixed(t1))
        _ = try laterStore.ingest(PollContext(source: "gits", startedAt: t1), Producer(incidents: later).callAsFunction)
        try laterStore.recordRun(IngestRun(source: "its-seoul", startedAt: t1, finishedAt: t1, status: .failed,
                                           error: "its: data.go.kr gateway error 30 (SERVICE_KEY_IS_NOT_REGISTERED_ERROR)"))
        // A replay of a saved ITS answer of t0 (the same two incidents, unchanged) that
        // declared three records, one of them unreadable: incomplete, one rejected.
        let replay = Producer(
            incidents: first.filter { $0.source == "its-seoul" },
            rejected: [RejectedRecord(externalID: nil, position: "items[3]", reason: "has no startDate")],
            verdict: ResponseVerdict(incompleteBecause: ["totalCount is 3 but the response holds 2 readable records"]))
        _ = try laterStore.ingest(PollContext(source: "its-seoul", startedAt: t1, observedAt: t0,
                                              origin: .file(path: "/backfill/its-seoul-20240101.json", complete: false)),
                                  replay.callAsFunction)
    }
}
