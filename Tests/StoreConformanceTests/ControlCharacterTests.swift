import Foundation
import IncidentCore
import Testing

/// Issue 24, point 6: the two stores disagreed on a NUL in text (SQLite stored it, and CSV then
/// carried a raw NUL; PostgreSQL set the record aside) and on a control character in --search.
/// One rule, applied where records are mapped for storage (``Incident/normalizedForStorage(fields:)``,
/// as ``IngestIncidents`` calls it) and where search text is read (``SearchTerms``).
@Suite("Control characters in stored text and in search text (every store)")
struct ControlCharacterTests {
    @Test("C0 controls other than TAB, LF, CR are stored as spaces in ids, text and set-aside records; both stores hold the same rows", arguments: StoreKind.allCases)
    func stored(kind: StoreKind) throws {
        try withStore(kind) { store in
            var dirty = incident("id\u{0}1", description: "[사고] 잠실대교\u{0}\u{0}")
            dirty.location = "lane\u{1B}[31m red\tline\nnext"
            dirty.road = "경부\u{0C}고속도로\u{7}"
            let aside = RejectedRecord(externalID: "bad\u{0}", position: "items[1]", reason: "no coordinate\u{1}", excerpt: "{\"x\":\"\u{0}\"}")
            let run = try poll(store, [.incident(dirty.normalizedForStorage()), .rejected(aside.normalizedForStorage)], at: t0)
            #expect(run.status == .succeeded, "\(run.error ?? "")")
            #expect(run.counts.inserted == 1 && run.counts.rejected == 1, "\(run.counts)")
            let stored = try #require(try allRows(store).first?.incident)
            #expect(stored.externalID == "id 1")
            #expect(stored.description == "[사고] 잠실대교  ")
            #expect(stored.location == "lane [31m red\tline\nnext", "TAB and LF are kept")
            #expect(stored.road == "경부 고속도로 ")
            let runID = try #require(runLog(store).first?.id)
            #expect(try store.rejections(runID: runID).map(\.record)
                    == [RejectedRecord(externalID: "bad ", position: "items[1]", reason: "no coordinate ", excerpt: "{\"x\":\" \"}")])
        }
    }

    @Test("a run's error quoting a provider's NUL is recorded whole, the NUL a space, on both stores", arguments: StoreKind.allCases)
    func runError(kind: StoreKind) throws {
        try withStore(kind) { store in
            let ingest = IngestIncidents(store: store, clock: .fixed(t0), describe: { "\($0)" })
            let run = ingest.skip(source: "gits", status: .failed, reason: "the API answered: bad\u{0}key\u{1B}[0m (code 30)")
            #expect(run.error == "the API answered: bad key [0m (code 30)")
            let recorded = try runLog(store).map(\.error)
            #expect(recorded == ["the API answered: bad key [0m (code 30)"])
        }
    }

    /// Bidirectional controls are text (Arabic and Hebrew need them): both stores keep them as
    /// sent; only terminal output neutralizes them (EndToEndTests: TerminalSafetyTests).
    @Test("bidirectional controls are stored as sent and searched as text on both stores", arguments: StoreKind.allCases)
    func bidi(kind: StoreKind) throws {
        try withStore(kind) { store in
            let text = "[사고] \u{202E}교대실잠\u{202C} 후속 \u{2066}x\u{2069}"
            try poll(store, [.incident(incident("A", description: text).normalizedForStorage())], at: t0)
            #expect(try allRows(store).first?.incident.description == text)
            for (term, found) in [("\u{202E}교대실잠", 1), ("교대실잠", 1), ("잠실대교", 0), ("\u{2066}x", 1)] {
                var query = IncidentQuery(now: t1)
                query.search = term
                #expect(try list(store, query).count == found, "\(term.debugDescription)")
            }
        }
    }

    @Test("a control character in search or road text is the same error on both stores; whitespace controls separate words", arguments: StoreKind.allCases)
    func search(kind: StoreKind) throws {
        try withStore(kind) { store in
            try poll(store, [.incident(incident("A", description: "[사고] 잠실대교 후속 처리").normalizedForStorage())], at: t0)
            for (text, code) in [("\u{0}", "0000"), ("잠실\u{0}", "0000"), ("a\u{1B}[31m", "001B"), ("\u{7F}", "007F"), ("후속\u{9B}", "009B")] {
                var query = IncidentQuery(now: t1)
                query.search = text
                #expect(throws: QueryError("the search text contains the control character U+\(code); use printable text")) {
                    try list(store, query)
                }
            }
            for text in ["잠실대교\t후속", "후속\u{0B}처리", "잠실\u{0C}\r\n후속", "잠실\u{85}후속"] {
                var query = IncidentQuery(now: t1)
                query.search = text
                #expect(try list(store, query).count == 1, "\(text.debugDescription)")
            }
            for (road, code) in [("경부\u{0}", "0000"), ("\u{1B}[31m경부", "001B")] {
                var query = IncidentQuery(now: t1)
                query.roadContains = road
                #expect(throws: QueryError("the road text contains the control character U+\(code); use printable text")) {
                    try list(store, query)
                }
            }
            var query = IncidentQuery(now: t1)
            query.search = String(repeating: "가", count: SearchTerms.maxCodePoints + 1)
            #expect(throws: QueryError("the search text is 257 characters long; search for at most 256")) { try list(store, query) }
            query.search = " \t "
            #expect(throws: QueryError("the search text has no words; give at least one")) { try list(store, query) }
        }
    }
}
