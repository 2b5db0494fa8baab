import Foundation
import TestSupport
import Testing

/// The change feed under `kill -9` (issue 22 item 4): producers (`incident-scheduler run --loop`
/// polling a loopback GITS server whose answers change at every request) and a consumer
/// (`incidents changes --after CURSOR --follow`, started again from the last cursor it printed
/// after each kill) are killed with SIGKILL at random moments, 100 kills in all; what the
/// consumer printed, put together, must be the log in the database at the end: no gap, no
/// repeat. On PostgreSQL three producer hosts commit at once, and the test database pauses
/// each poll after its run id is drawn and again after its cursors are drawn (while it holds
/// `change_feed`'s row lock, before its commit), so commits come out of run-id order and the
/// producer kills are aimed at a host whose commit is pending.
@Suite("End to end: the change feed under 100 kill -9 of its producers and of a --follow consumer", .serialized)
struct ChangeFeedKillTests {
    static let kills = 100

    // MARK: The feed

    /// Answers of source `source` that change at every request: of 40 incidents, each comes or
    /// goes with probability 0.2 and each listed one changes its description with 0.1, so each
    /// poll logs appearances, revisions, clears and reopenings. Complete (the count matches).
    static func answers(source: Int, count: Int, random: inout SplitMix64) -> [ResponseSpec] {
        var present = Set<Int>()
        var version = [Int: Int]()
        return (0..<count).map { _ in
            for id in 0..<40 where random.next(in: 0...1) < 0.2 {
                if present.contains(id) { present.remove(id) } else { present.insert(id) }
            }
            for id in present where random.next(in: 0...1) < 0.1 { version[id, default: 0] += 1 }
            let items = present.sorted().map { id in
                "<itemList><routeId></routeId><linkId>10000\(id)</linkId><spotId></spotId><regSeq>2024\(source)\(1000 + id)</regSeq>"
                    + "<confirmDate>2024-01-01 00:05:00</confirmDate><startDate>2024-01-01 00:02:00</startDate><estEndDate></estEndDate>"
                    + "<endDate></endDate><restrictType>1차로</restrictType><inciDesc>[사고] 경부고속도로 사고 \(version[id] ?? 0)</inciDesc>"
                    + "<inciPlace1>경부고속도로</inciPlace1><inciPlace2>(서울방향) 수원IC → 신갈JC</inciPlace2>"
                    + "<coord_x>127.1\(id)</coord_x><coord_y>37.2\(id)</coord_y></itemList>"
            }
            return .ok("<?xml version=\"1.0\" encoding=\"UTF-8\"?><ServiceResult><comMsgHeader/><msgHeader><headerCd>0</headerCd>"
                       + "<headerMsg>정상적으로 처리되었습니다.</headerMsg><itemCount>\(items.count)</itemCount></msgHeader><msgBody>"
                       + items.joined() + "</msgBody></ServiceResult>")
        }
    }

    /// A configuration of `sources` GITS sources polled every second from `server`.
    static func config(_ ws: Workspace, database: String, server: LoopbackServer, sources: Int) throws -> String {
        let list = (1...sources).map {
            #"{"name": "s\#($0)", "provider": "gits", "keyEnv": "K", "baseURL": "\#(server.url("/s\($0)/").absoluteString)", "interval": "1s", "retry": {"maxRetries": 0}}"#
        }
        return try ws.write("config.json", #"{"database": "\#(database)", "lease": "3s", "sources": [\#(list.joined(separator: ", "))]}"#)
    }

    // MARK: The processes

    /// `incidents changes --after CURSOR --follow`, started again from the last cursor printed.
    final class Consumer: @unchecked Sendable {  // used by the test's task only
        let database: String
        var process: RunningProcess?
        /// Every complete line printed, by every run, in order.
        var lines: [String] = []
        var cursor: Int64 = 0
        /// Kills that cut a line half-printed.
        var cutLines = 0

        init(database: String) { self.database = database }

        func start() throws {
            process = try RunningProcess(Executables.url("incidents"), ["changes", "--after", String(cursor), "--follow", "--format", "ndjson",
                                                                        "--interval", "1s", "--database", database])
        }

        /// Stops the run with `signal` and takes the complete lines it printed (a line cut by
        /// the kill is not printed: the next run prints it again from the cursor before it).
        func stop(_ signal: Int32) async {
            guard let process else { return }
            process.send(signal)
            _ = await process.finished(timeout: 20)
            let output = process.stdoutSoFar
            let complete = output.split(separator: "\n", omittingEmptySubsequences: false)
            if complete.last?.isEmpty == false { cutLines += 1 }
            for line in complete.dropLast() {
                lines.append(String(line))
                if let cursor = Self.cursor(of: line) { self.cursor = cursor }
            }
            self.process = nil
        }

        static func cursor(of line: Substring) -> Int64? {
            guard line.hasPrefix(#"{"cursor": "#) else { return nil }
            return Int64(line.dropFirst(11).prefix { $0.isNumber })
        }
    }

    /// `incident-scheduler run --loop` on a stand-in host (`unshare --uts` on PostgreSQL, where the
    /// hosts must differ; one local process on SQLite), its connections named `producer-HOST`.
    final class Producer: @unchecked Sendable {
        let host: String?
        let config: String
        var process: RunningProcess?
        var startedAt = Date()

        init(host: String?, config: String) {
            self.host = host
            self.config = config
        }

        var applicationName: String { "producer-\(host ?? "local")" }

        func start() throws {
            let environment = ["K": "k", "PGAPPNAME": applicationName]
            let scheduler = [Executables.url("incident-scheduler").path, "run", "--loop", "--config", config]
            if let host {
                process = try RunningProcess(URL(fileURLWithPath: "/usr/bin/unshare"),
                                             ["--uts", "/bin/sh", "-c", #"hostname "$0" && exec "$@""#, host] + scheduler, environment: environment)
            } else {
                process = try RunningProcess(URL(fileURLWithPath: scheduler[0]), Array(scheduler.dropFirst()), environment: environment)
            }
            startedAt = Date()
        }

        func kill() async {
            process?.send(SIGKILL)
            _ = await process?.finished(timeout: 20)
        }
    }

    /// What happened during the kills.
    struct Tally {
        var producerKills = 0
        var consumerKills = 0
        /// Producer kills while the victim's transaction held the change feed's lock (PostgreSQL).
        var whilePending = 0
    }

    /// Kills a random process (a producer that has run for a random 0.3 to 1.2 s, or the
    /// consumer) every 0.05 to 0.3 s, `kills` times, and starts it again. `pending`, when given,
    /// is asked before a producer's kill (up to 1 s) whether its commit is pending.
    static func killAtRandom(_ producers: [Producer], _ consumer: Consumer, random: inout SplitMix64,
                             pending: ((Producer) async throws -> Bool)? = nil) async throws -> Tally {
        var tally = Tally()
        for _ in 0..<kills {
            try await Task.sleep(for: .milliseconds(Int.random(in: 50...300, using: &random)))
            if Bool.random(using: &random) {
                await consumer.stop(SIGKILL)
                tally.consumerKills += 1
                try consumer.start()
                continue
            }
            let victim = producers[Int.random(in: 0..<producers.count, using: &random)]
            let ran = Double.random(in: 0.3...1.2, using: &random) - Date().timeIntervalSince(victim.startedAt)
            if ran > 0 { try await Task.sleep(for: .milliseconds(Int(ran * 1000))) }
            if let pending {
                let deadline = Date().addingTimeInterval(1)
                var found = false
                while !found && Date() < deadline {
                    found = try await pending(victim)
                }
                if found { tally.whilePending += 1 }
            }
            await victim.kill()
            tally.producerKills += 1
            try victim.start()
        }
        return tally
    }

    /// Stops the producers (SIGTERM), lets the consumer reach `last` (the log's last cursor),
    /// stops it, and compares what it printed with `log` (`cursor kind source external_id`).
    static func expectConsumedIsLog(_ consumer: Consumer, _ log: () async throws -> [String], seed: UInt64, tally: Tally) async throws {
        let entries = try await log()
        let last = Int64(entries.last?.split(separator: " ").first ?? "0") ?? 0
        let reached = try await eventually(timeout: 30) {
            consumer.process.map { Consumer.cursor(of: Substring($0.stdoutSoFar.split(separator: "\n").last ?? "")) ?? consumer.cursor } == last
        }
        await consumer.stop(SIGTERM)
        #expect(reached, "seed \(seed): the consumer did not reach cursor \(last)")
        let consumed = try consumer.lines.map { line -> String in
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            return "\(object["cursor"] ?? "-") \(object["kind"] ?? "-") \(object["source"] ?? "-") \(object["external_id"] as? String ?? "")"
        }
        let cursors = consumed.map { Int64($0.split(separator: " ")[0]) ?? -1 }
        #expect(Set(cursors).count == cursors.count, "seed \(seed): a cursor was printed twice")
        #expect(zip(cursors, cursors.dropFirst()).allSatisfy { $0 < $1 }, "seed \(seed): cursors out of order")
        #expect(consumed == entries, "seed \(seed): consumed \(consumed.count) transitions, the log has \(entries.count); first difference at \(consumed.indices.first { $0 >= entries.count || consumed[$0] != entries[$0] } ?? consumed.count)")
        #expect(entries.count > 200, "seed \(seed): too little was logged under the kills to tell: \(entries.count)")
        #expect(tally.producerKills + tally.consumerKills == kills && tally.producerKills >= 30 && tally.consumerKills >= 30, "seed \(seed): \(tally)")
        print("change feed kill -9 (seed \(seed)): \(entries.count) transitions, \(tally.producerKills) producer kills (\(tally.whilePending) while a commit was pending), "
              + "\(tally.consumerKills) consumer kills (\(consumer.cutLines) cut a line)")
    }

    static func seed() -> UInt64 {
        ProcessInfo.processInfo.environment["CHANGE_FEED_KILL_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 0...UInt64.max)
    }

    // MARK: The tests

    @Test("SQLite: one producer and one consumer, killed 100 times at random: the consumed sequence is the log, no gap, no repeat")
    func sqlite() async throws {
        let seed = Self.seed()
        var random = SplitMix64(seed: seed)
        let routes = Dictionary(uniqueKeysWithValues: (1...3).map { ("/s\($0)/getIncidentInfo", Self.answers(source: $0, count: 150, random: &random)) })
        let server = try await LoopbackServer.start(routes: routes)
        defer { server.stop() }
        let ws = try Workspace()
        let producer = Producer(host: nil, config: try Self.config(ws, database: ws.database, server: server, sources: 3))
        try producer.start()
        defer { producer.process?.send(SIGKILL) }
        #expect(try await eventually(timeout: 30) { FileManager.default.fileExists(atPath: ws.database) })
        let consumer = Consumer(database: ws.database)
        try consumer.start()
        defer { consumer.process?.send(SIGKILL) }

        let tally = try await Self.killAtRandom([producer], consumer, random: &random)
        producer.process?.send(SIGTERM)
        _ = await producer.process?.finished(timeout: 30)
        try await Self.expectConsumedIsLog(consumer, {
            let result = await (try RunningProcess(URL(fileURLWithPath: "/usr/bin/sqlite3"), ["-separator", " ", ws.database,
                "SELECT id, kind, source, coalesce(external_id, '') FROM incident_transitions ORDER BY id"])).finished(timeout: 30)
            #expect(result.status == 0, "\(result.stderr)")
            return result.stdout.split(separator: "\n").map(String.init)
        }, seed: seed, tally: tally)
    }

    /// The test database's pauses: after a poll's run id is drawn (its `ingest_runs` row), 0 to
    /// 0.4 s, so polls that started in one order commit in another; after its cursors are drawn
    /// (its `incident_transitions` rows), 0.1 to 0.4 s, holding `change_feed`'s row lock before
    /// the commit: the other hosts' polls wait for it, and a kill then lands on a pending commit.
    static let pauses = """
        CREATE FUNCTION test_pause() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN PERFORM pg_sleep(CAST(TG_ARGV[0] AS double precision) + random() * CAST(TG_ARGV[1] AS double precision)); RETURN NULL; END $$;
        CREATE TRIGGER test_pause_after_run_id AFTER INSERT ON ingest_runs FOR EACH STATEMENT EXECUTE FUNCTION test_pause('0', '0.4');
        CREATE TRIGGER test_pause_before_commit AFTER INSERT ON incident_transitions FOR EACH STATEMENT EXECUTE FUNCTION test_pause('0.1', '0.3');
        """

    @Test("PostgreSQL: three producer hosts whose commits are held and come out of run-id order, and a consumer, killed 100 times at random (a producer while its commit is pending): the consumed sequence is the log, no gap, no repeat")
    func postgres() async throws {
        let seed = Self.seed()
        var random = SplitMix64(seed: seed)
        let routes = Dictionary(uniqueKeysWithValues: (1...6).map { ("/s\($0)/getIncidentInfo", Self.answers(source: $0, count: 150, random: &random)) })
        let server = try await LoopbackServer.start(routes: routes)
        defer { server.stop() }
        try await PostgresDatabase.with { database in
            let migrated = try await run("incident-scheduler", ["migrate", "--database", database.uri])
            try #require(migrated.status == 0, "\(migrated.stderr)")
            _ = try await database.query(Self.pauses)
            let config = try Self.config(try Workspace(), database: database.uri, server: server, sources: 6)
            let producers = ["host-a", "host-b", "host-c"].map { Producer(host: $0, config: config) }
            for producer in producers { try producer.start() }
            defer { for producer in producers { producer.process?.send(SIGKILL) } }
            let consumer = Consumer(database: database.uri)
            try consumer.start()
            defer { consumer.process?.send(SIGKILL) }

            let tally = try await Self.killAtRandom(producers, consumer, random: &random) { victim in
                try await !database.query("""
                    SELECT 1 FROM pg_stat_activity WHERE application_name = '\(victim.applicationName)' AND wait_event = 'PgSleep'
                      AND query LIKE '%INSERT INTO incident_transitions%'
                    """).isEmpty
            }
            for producer in producers { producer.process?.send(SIGTERM) }
            for producer in producers { _ = await producer.process?.finished(timeout: 30) }
            try await Self.expectConsumedIsLog(consumer, {
                try await database.query("SELECT cursor, kind, source, coalesce(external_id, '') FROM incident_transitions ORDER BY cursor")
                    .map { $0.joined(separator: " ") }
            }, seed: seed, tally: tally)
            // Commits came out of run-id order (a poll with a smaller run id logged after one
            // with a larger), the kills found commits pending, and no cursor was lost to them.
            let outOfOrder = try await database.query("""
                SELECT count(*) FROM (SELECT run_id, lag(run_id) OVER (ORDER BY cursor) AS previous FROM incident_transitions) o WHERE run_id < previous
                """).first?.first.flatMap { Int($0) } ?? 0
            #expect(outOfOrder > 10, "seed \(seed): \(outOfOrder) polls committed out of run-id order")
            #expect(tally.whilePending >= 10, "seed \(seed): \(tally)")
            let span = try await database.query("SELECT count(*), coalesce(min(cursor), 0), coalesce(max(cursor), 0) FROM incident_transitions").first ?? []
            #expect(span.count == 3 && span[1] == "1" && span[0] == span[2], "seed \(seed): cursors \(span)")
            print("change feed kill -9 on PostgreSQL: \(outOfOrder) polls committed out of run-id order")
        }
    }
}
