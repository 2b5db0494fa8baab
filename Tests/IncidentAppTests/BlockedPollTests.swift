import Foundation
@testable import IncidentApp
import IncidentCore
import IncidentFeeds
import IncidentSQLite
import Synchronization
import Testing
import TestSupport

/// Polls blocked in the database (issue 21: "store calls off the cooperative pool"): more polls
/// than Swift's cooperative pool has threads (one per core) wait for a lock that another session
/// holds for longer than their lease. Their store calls wait on the store's own threads, so the
/// lease keepers go on renewing, other tasks (store reads, timers) run at once, and when the
/// lock goes every poll commits under its lease.
///
/// Before, the blocked polls held the pool's threads; libdispatch on Linux adds one when all
/// are blocked, about once a second, so 64 blocked polls stopped every other task for 67 s: the
/// first reads and timers came long after the leases had run out.
@Suite("Polls blocked in the database", .serialized)
struct BlockedPollTests {
    static let leaseSeconds: Int64 = 10

    /// Holds each poll at its request (after its lease claim, before it stores anything) until
    /// all have come, and lets them go when the test says.
    actor Gate {
        private var arrived = 0
        private var open = false
        private var waiting: [CheckedContinuation<Void, Never>] = []
        private var allCame: CheckedContinuation<Void, Never>?
        let count: Int

        init(count: Int) { self.count = count }

        func arrive() async {
            arrived += 1
            if arrived == count { allCame?.resume(); allCame = nil }
            if open { return }
            await withCheckedContinuation { waiting.append($0) }
        }

        func waitForAll() async {
            if arrived >= count { return }
            await withCheckedContinuation { allCame = $0 }
        }

        func release() {
            open = true
            for continuation in waiting { continuation.resume() }
            waiting = []
        }
    }

    /// What the test checks while the polls wait: `reads` concurrent store reads through a
    /// reader's own threads and as many timers complete.
    static func otherWorkCompletes(reader: Stores.Readable, reads: Int = 50) async throws -> Int {
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<reads {
                group.addTask { try await reader.perform { try reader.runs(source: nil, limit: 5, failuresFirst: false) }.count + 1 }
                group.addTask {
                    try await Task.sleep(for: .milliseconds(10))
                    return 1
                }
            }
            return try await group.reduce(0) { $0 + ($1 > 0 ? 1 : 0) }
        }
    }

    /// A round of `polls` sources (one GITS incident each) whose requests wait at `gate`.
    static func round(store: Stores.Writable, polls: Int, gate: Gate, lines: SchedulerServiceTests.Lines) -> (SchedulerService, [SourceDefinition]) {
        let service = SchedulerService(store: store, clock: .system, host: "blocked-test", logger: lines.logger, concurrency: polls,
                                       leaseSeconds: leaseSeconds,
                                       makeClient: { _ in SchedulerServiceTests.ScriptedClient { _ in await gate.arrive() } })
        return (service, (1...polls).map { SchedulerServiceTests.source("s\($0)", interval: 60) })
    }

    /// The round's end as the test expects it: every poll stored its incident under its lease.
    static func expectCommittedUnderLease(_ round: SchedulerService.Round, store: Stores.Writable, lines: SchedulerServiceTests.Lines,
                                          sources: [SourceDefinition]) throws {
        let polls = sources.count
        let log = lines.all.withLock { $0 }.joined(separator: "\n")
        #expect(round.runs.map(\.status) == Array(repeating: .succeeded, count: polls), "\(round.runs.map { $0.error ?? "ok" })")
        #expect(round.runs.map(\.counts.inserted) == Array(repeating: 1, count: polls))
        #expect(!log.contains("event=lease.lost"), "\(log)")
        for source in sources {
            let lease = try #require(try store.lease(of: source.name))
            #expect(lease.holder.host == "blocked-test" && lease.expiresAt == nil, "\(source.name): \(lease)")  // released by its poll
        }
        #expect(try store.statistics(matching: IncidentQuery(now: UTCClock.system.now(), activeOnly: true), utcOffsetSeconds: 0)
            .bySource.map(\.0).sorted() == sources.map(\.name).sorted())
    }

    @Test("SQLite: polls waiting for another connection's BEGIN IMMEDIATE past their lease keep it and commit; reads and timers run meanwhile")
    func sqlite() async throws {
        // As many as a scheduler polls at once.
        let polls = Configuration.maxConcurrency
        let path = try TestPaths.temporaryDirectory("blocked").appendingPathComponent("incidents.sqlite").path
        // The scheduler's store, waiting up to 40 s for the lock (its default is 10 s): past the lease.
        let store: Stores.Writable = try SQLiteStore(path: path, clock: .system, busyTimeout: 40)
        let reader = try Stores.openForReading(path, clock: .system)
        let holder = try Database(path: path, mode: .readWrite)
        let gate = Gate(count: polls), lines = SchedulerServiceTests.Lines()
        let (service, sources) = Self.round(store: store, polls: polls, gate: gate, lines: lines)
        let round = Task { await service.pollRound(sources, deadlineSeconds: 600) }

        // Every lease claimed, then the write lock taken before any poll may store.
        await gate.waitForAll()
        var claimed: [UTCInstant] = []
        for source in sources { claimed.append(try #require(try await store.perform { try store.lease(of: source.name) }?.expiresAt)) }
        let (earliest, latest) = (try #require(claimed.min()), try #require(claimed.max()))
        try holder.execute("BEGIN IMMEDIATE")
        await gate.release()

        // Reads and timers run while the polls wait, before their leases run out (the stored
        // expiry); then the polls wait on past it.
        #expect(try await Self.otherWorkCompletes(reader: reader) == 100)
        #expect(UTCClock.system.now() < earliest, "other tasks waited until the leases had run out")
        while UTCClock.system.now() <= latest {
            _ = try await Self.otherWorkCompletes(reader: reader)
        }
        #expect(try await reader.perform { try reader.runs(source: nil, limit: 10, failuresFirst: false) }.isEmpty)  // none stored yet
        try holder.execute("COMMIT")

        let finished = await round.value
        try Self.expectCommittedUnderLease(finished, store: store, lines: lines, sources: sources)
    }

    @Test("PostgreSQL: polls waiting behind a LOCK TABLE past their lease are renewed on their own connection meanwhile and commit under it; reads and timers run meanwhile")
    func postgres() async throws {
        let psql = PSQL()
        try await psql.withDatabase { uri in
            // The scheduler's store, with a 20 s lock timeout (with the lease the scheduler gives
            // it, a lock wait ends at the lease; here the keeper's renewals are what is watched).
            // Fewer than SQLite's (each takes a connection of the test server), still far more
            // than the cooperative pool's threads.
            let polls = 16
            let store = try Stores.openForWriting(uri, clock: .system, leaseSeconds: 20, concurrency: polls)
            let reader = try Stores.openForReading(uri, clock: .system)
            let gate = Gate(count: polls), lines = SchedulerServiceTests.Lines()
            let (service, sources) = Self.round(store: store, polls: polls, gate: gate, lines: lines)
            let round = Task { await service.pollRound(sources, deadlineSeconds: 600) }

            await gate.waitForAll()
            let locker = try RunningProcess(PSQL.bin.appendingPathComponent("psql"), ["-X", "-d", uri, "-c", """
                BEGIN; LOCK TABLE incidents IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(120);
                """])
            defer { if locker.process.isRunning { locker.send(SIGKILL) } }
            while try await psql.rows(uri, "SELECT count(*) FROM pg_locks WHERE relation = 'incidents'::regclass AND granted") != [["1"]] {
                try await Task.sleep(for: .milliseconds(50))
            }
            let expiries = "SELECT source, extract(epoch FROM expires_at)::bigint, expires_at < clock_timestamp() FROM source_leases ORDER BY source"
            let claimed = try await psql.rows(uri, expiries)
            await gate.release()
            let waiting = "SELECT count(*) FROM pg_locks WHERE relation = 'incidents'::regclass AND NOT granted"
            while try await psql.rows(uri, waiting) != [["\(polls)"]] {
                try await Task.sleep(for: .milliseconds(50))
            }

            // Reads and timers run while the polls wait, before the leases as claimed run out (on
            // the server's clock). Past that, every poll still waiting, every lease has been
            // renewed beyond its claim and is held.
            let earliest = claimed.compactMap { Int($0[1]) }.min() ?? 0, latest = claimed.compactMap { Int($0[1]) }.max() ?? 0
            #expect(try await Self.otherWorkCompletes(reader: reader) == 100)
            #expect(try await psql.rows(uri, "SELECT to_timestamp(\(earliest)) > clock_timestamp()") == [["t"]],
                    "other tasks waited until the leases had run out")
            while try await psql.rows(uri, "SELECT to_timestamp(\(latest + 1)) < clock_timestamp()") != [["t"]] {
                _ = try await Self.otherWorkCompletes(reader: reader)
            }
            #expect(try await psql.rows(uri, waiting) == [["\(polls)"]])
            let renewed = try await psql.rows(uri, expiries)
            #expect(renewed.map(\.[0]) == sources.map(\.name).sorted())
            for (before, after) in zip(claimed, renewed) {
                #expect((Int(after[1]) ?? 0) > (Int(before[1]) ?? 0) && after[2] == "f", "\(before) then \(after)")
            }
            _ = try await psql.rows(uri, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(120)%' AND pid <> pg_backend_pid()")

            let finished = await round.value
        try Self.expectCommittedUnderLease(finished, store: store, lines: lines, sources: sources)
        }
    }

    /// psql on the test run's throwaway server (`INCIDENTS_TEST_POSTGRES`), run on threads of
    /// its own (a process wait blocks).
    struct PSQL: Sendable {
        static let bin = URL(fileURLWithPath: ProcessInfo.processInfo.environment["THROWAWAY_POSTGRES_BIN"] ?? "/usr/lib/postgresql/15/bin")
        let threads = StoreExecutor(name: "psql", threads: 4)

        /// The rows of `sql` (unaligned, tab-separated).
        func rows(_ uri: String, _ sql: String) async throws -> [[String]] {
            let result = try await threads.run {
                try RunningProcess(Self.bin.appendingPathComponent("psql"),
                                   ["-X", "-q", "-A", "-t", "-F", "\t", "-v", "ON_ERROR_STOP=1", "-d", uri, "-c", sql]).wait(timeout: 30)
            }
            try #require(result.status == 0, "psql: \(sql): \(result.stderr)")
            return result.stdout.split(separator: "\n").map { $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init) }
        }

        /// A database of its own on the server, dropped afterwards.
        func withDatabase(_ body: (String) async throws -> Void) async throws {
            let server = try #require(ProcessInfo.processInfo.environment["INCIDENTS_TEST_POSTGRES"].flatMap { $0.isEmpty ? nil : $0 },
                                      "INCIDENTS_TEST_POSTGRES is not set: run the tests with Scripts/test, which starts a throwaway PostgreSQL")
            var components = try #require(URLComponents(string: server))
            let name = "t_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
            _ = try await rows(server, "CREATE DATABASE \(name)")
            components.path = "/" + name
            do {
                try await body(try #require(components.string))
            } catch {
                _ = try? await rows(server, "DROP DATABASE \(name) WITH (FORCE)")
                throw error
            }
            _ = try await rows(server, "DROP DATABASE \(name) WITH (FORCE)")
        }
    }
}
