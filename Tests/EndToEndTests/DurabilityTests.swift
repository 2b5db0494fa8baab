import Foundation
import IncidentSQLite
import TestSupport
import Testing

/// Crashes, overlapping cron runs and concurrent readers against the real executables.
@Suite("End to end: durability and concurrency", .serialized)
struct DurabilityTests {
    /// Writes a GITS feed of `count` records with `../shared/bench/gen_gits_feed.py`.
    static func generatedFeed(_ count: Int, seed: Int, in directory: URL) async throws -> String {
        let path = directory.appendingPathComponent("feed-\(count)-\(seed).xml").path
        let generator = TestPaths.packageRoot.deletingLastPathComponent().appendingPathComponent("shared/bench/gen_gits_feed.py")
        let process = try RunningProcess(URL(fileURLWithPath: "/usr/bin/python3"), [generator.path, String(count), path, "--seed", String(seed)])
        let result = await process.finished(timeout: 120)
        #expect(result.status == 0, "\(result.stderr)")
        return path
    }

    /// What identifies a database state: rows, runs, revisions, and the sum of last_seen_run_id.
    struct Snapshot: Equatable, CustomStringConvertible {
        var incidents: Int64
        var runs: Int64
        var revisions: Int64
        var seenRunSum: Int64
        var description: String { "incidents=\(incidents) runs=\(runs) revisions=\(revisions) seen=\(seenRunSum)" }
    }

    static func snapshot(_ path: String) async throws -> (Snapshot, integrity: String) {
        let db = try Database(path: path, mode: .readWrite)
        let check = try db.prepare("PRAGMA integrity_check")
        _ = try check.step()
        let integrity = check.string(at: 0) ?? ""
        let snapshot = Snapshot(
            incidents: try db.scalarInt("SELECT count(*) FROM incidents") ?? -1,
            runs: try db.scalarInt("SELECT count(*) FROM ingest_runs") ?? -1,
            revisions: try db.scalarInt("SELECT count(*) FROM incident_revisions") ?? -1,
            seenRunSum: try db.scalarInt("SELECT coalesce(sum(last_seen_run_id), 0) FROM incidents") ?? -1)
        return (snapshot, integrity)
    }

    /// Copies the database (file, WAL) so a state can be restored exactly.
    static func copyDatabase(_ from: String, to: String) async throws {
        for suffix in ["", "-wal"] {
            try? FileManager.default.removeItem(atPath: to + suffix)
            if FileManager.default.fileExists(atPath: from + suffix) {
                try FileManager.default.copyItem(atPath: from + suffix, toPath: to + suffix)
            }
        }
        try? FileManager.default.removeItem(atPath: to + "-shm")
    }

    @Test("SIGKILL at random moments of a large ingest leaves exactly the before- or the after-state; then a normal run works")
    func killNine() async throws {
        let ws = try Workspace()
        let first = try await Self.generatedFeed(10_000, seed: 1, in: ws.directory)
        let second = try await Self.generatedFeed(20_000, seed: 2, in: ws.directory)
        let seed = try await run("incident-scheduler", ["ingest", "--source", "gits", "--file", first, "--database", ws.database])
        #expect(seed.status == 0, "\(seed.stderr)")
        let pristine = ws.directory.appendingPathComponent("pristine.sqlite").path
        try await Self.copyDatabase(ws.database, to: pristine)
        let (before, _) = try await Self.snapshot(ws.database)

        // The after-state, from an uninterrupted run on a copy.
        let reference = ws.directory.appendingPathComponent("reference.sqlite").path
        try await Self.copyDatabase(pristine, to: reference)
        let clock = Date()
        let complete = try await run("incident-scheduler", ["ingest", "--source", "gits", "--file", second, "--database", reference])
        let duration = Date().timeIntervalSince(clock)
        #expect(complete.status == 0, "\(complete.stderr)")
        let (after, _) = try await Self.snapshot(reference)
        #expect(before != after)

        var generator = SystemRandomNumberGenerator()
        var outcomes: [String] = []
        // Five kills (eight made this the end-to-end pass's longest test by two minutes: each
        // attempt reruns the 20,000-record ingest).
        for attempt in 0..<5 {
            try await Self.copyDatabase(pristine, to: ws.database)
            let process = try RunningProcess(Executables.url("incident-scheduler"),
                                             ["ingest", "--source", "gits", "--file", second, "--database", ws.database])
            // Moments spread over the whole run and a little past it, so both outcomes occur.
            let delay = UInt32(Double.random(in: 0.05...1.1, using: &generator) * duration * 1_000_000)
            try await Task.sleep(for: .microseconds(delay))
            process.send(SIGKILL)
            _ = await process.finished(timeout: 30)
            let (state, integrity) = try await Self.snapshot(ws.database)
            #expect(integrity == "ok", "attempt \(attempt): integrity \(integrity)")
            #expect(state == before || state == after, "attempt \(attempt) killed after \(delay / 1000) ms: \(state)")
            outcomes.append(state == before ? "before" : "after")
            let rerun = try await run("incident-scheduler", ["ingest", "--source", "gits", "--file", second, "--database", ws.database])
            #expect(rerun.status == 0, "the next run after a kill must work without repair: \(rerun.stderr)")
            #expect(try await Self.snapshot(ws.database).0.incidents == after.incidents)
        }
        print("kill -9 outcomes over a \(Int(duration * 1000)) ms ingest: \(outcomes)")
    }

    @Test("two schedulers started at once on one file, 20 times: one works, the other exits 75 promptly; never locked, never duplicates")
    func overlap() async throws {
        let ws = try Workspace()
        let feed = try await Self.generatedFeed(5_000, seed: 3, in: ws.directory)
        var statuses: [Int32] = []
        for round in 0..<20 {
            let path = ws.directory.appendingPathComponent("overlap-\(round).sqlite").path
            let a = try RunningProcess(Executables.url("incident-scheduler"), ["ingest", "--source", "gits", "--file", feed, "--database", path])
            let b = try RunningProcess(Executables.url("incident-scheduler"), ["ingest", "--source", "gits", "--file", feed, "--database", path])
            let results = [await a.finished(timeout: 60), await b.finished(timeout: 60)]
            for result in results {
                #expect([0, 75].contains(result.status), "round \(round): status \(result.status): \(result.stderr)")
                #expect(!result.stderr.lowercased().contains("database is locked"), "round \(round): \(result.stderr)")
                if result.status == 75 {
                    #expect(result.stderr.contains("event=scheduler.locked"))
                    #expect(result.stderr.contains("another incident-scheduler is working on this database"))
                }
            }
            #expect(results.contains { $0.status == 0 })
            statuses += results.map(\.status)
            let (state, integrity) = try await Self.snapshot(path)
            #expect(integrity == "ok")
            #expect(state.incidents == 5_000, "round \(round): \(state)")
            let db = try Database(path: path, mode: .readOnly)
            #expect(try db.scalarInt("SELECT count(*) FROM (SELECT 1 FROM incidents GROUP BY source, external_id HAVING count(*) > 1)") == 0)
        }
        print("overlap statuses: \(statuses)")
    }
}

@Suite("End to end: readers during an ingest")
struct ReaderDuringIngestTests {
    @Test("incidents list and stats in a loop while a 300,000-record ingest runs: every read succeeds and sees a whole poll")
    func readers() async throws {
        let ws = try Workspace()
        let seed = try await DurabilityTests.generatedFeed(1_000, seed: 5, in: ws.directory)
        let large = try await DurabilityTests.generatedFeed(300_000, seed: 6, in: ws.directory)
        #expect(try await run("incident-scheduler", ["ingest", "--source", "gits", "--file", seed, "--database", ws.database]).status == 0)
        // The large feed's ids 202300000000… overlap the seed's 1,000: after it, 300,000 rows.
        let ingest = try RunningProcess(Executables.url("incident-scheduler"),
                                        ["ingest", "--source", "gits", "--file", large, "--database", ws.database])
        var totals: [Int] = []
        var lists = 0
        while ingest.process.isRunning {
            let stats = try await run("incidents", ["stats", "--database", ws.database, "--format", "json"])
            #expect(stats.status == 0, "\(stats.stderr)")
            let object = try JSONSerialization.jsonObject(with: Data(stats.stdout.utf8)) as? [String: Any]
            totals.append(object?["total"] as? Int ?? -1)
            let list = try await run("incidents", ["list", "--database", ws.database, "--limit", "3", "--format", "json"])
            #expect(list.status == 0, "\(list.stderr)")
            #expect((try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [Any])?.count == 3)
            lists += 1
        }
        let result = await ingest.finished()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(lists >= 3, "the reads should overlap the ingest (\(lists) rounds)")
        #expect(totals.allSatisfy { $0 == 1_000 || $0 == 300_000 }, "each read sees the poll before or after: \(Set(totals))")
        print("reader rounds during the ingest: \(lists); totals seen: \(Set(totals).sorted())")
    }
}
