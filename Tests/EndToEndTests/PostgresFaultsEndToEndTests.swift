import Foundation
import TestSupport
import Synchronization
import Testing

/// Scheduler hosts on one PostgreSQL database under the faults of real deployments (issue 24):
/// a pooler in transaction mode, a network that stops answering without closing, clocks that
/// disagree, a server in crash recovery. Hosts are `incident-scheduler` processes in UTS
/// namespaces of their own (``SchedulerFleet``); polls are counted on the feed server's side.
/// Leases and intervals are short (seconds) so that takeovers happen within the test.
@Suite("End to end: PostgreSQL hosts under a pooler, a partition, skewed clocks and a restart")
struct PostgresFaultsEndToEndTests {
    /// The time of the first `event=NAME` line of a logfmt log (its `ts=`, one-second resolution).
    static func loggedTime(_ log: String, _ event: String) -> Date? {
        guard let line = log.split(separator: "\n").first(where: { $0.contains(" event=\(event)") }),
              let stamp = line.split(separator: " ").first, stamp.hasPrefix("ts=") else { return nil }
        return ISO8601DateFormatter().date(from: String(stamp.dropFirst(3)))
    }

    typealias Hosts = MultiHostEndToEndTests

    // MARK: 1. PgBouncer in transaction mode, one shared role

    @Test("through PgBouncer in transaction mode with one role for all: a reader before the schema exists, then readers interleaved with three run --loop hosts; every window polled once, every run recorded and succeeded, every reader answered")
    func throughPgBouncer() async throws {
        let names = ["s1", "s2", "s3", "s4"]
        let server = try await LoopbackServer.start(routes: Hosts.routes(names))
        try await PostgresDatabase.with { database in
            // Two server connections for every client: readers and writers share them.
            let bouncer = try PgBouncer(database: database.uri, poolSize: 2)
            defer { bouncer.stop() }
            let uri = bouncer.uri
            // As the issue found it: a reader first, on the fresh database (refused: no schema),
            // and its session setting used to stay on the pooled connection for the writers.
            let early = try await run("incidents", ["list", "--database", uri])
            #expect(early.status != 0 && !early.stderr.contains("25006"), "\(early.status): \(early.stderr)")
            // 3 s, with 1.5 s for a claim to reach its request: before its request a poll's
            // statements queue for the pooler's two server connections, shared with the readers
            // (1.43 s in CI). A missed interval still leaves at least 6 s between requests.
            let config = try Hosts.config(server, names: names, interval: "3s")
            let fleet = try SchedulerFleet(hosts: ["host-a", "host-b", "host-c"], ["run", "--loop", "--config", config, "--database", uri])
            defer { fleet.kill() }
            let migrated = try await eventually(timeout: 20) {
                // Until the first host has migrated, the table does not exist.
                (try? await database.query("SELECT count(*) > 0 FROM ingest_runs")) == [["t"]]
            }
            try #require(migrated, "no run recorded within 20 s: \(fleet.processes.map { $0.process.stderrSoFar.suffix(1500) })")
            let answered = Mutex(0)
            let readers = Task { () -> [ProcessResult] in
                var results: [ProcessResult] = []
                while !Task.isCancelled {
                    results.append(try await run("incidents", ["list", "--database", uri, "--active", "--format", "json"]))
                    results.append(try await run("incidents", ["runs", "--database", uri, "--limit", "5"]))
                    answered.withLock { $0 = results.count }
                    // Readers all the time, not all the CPU: the hosts' timing is what is measured.
                    try? await Task.sleep(for: .milliseconds(300))
                }
                return results
            }
            let polled = try await eventually(timeout: 50) { try await server.requests().count >= names.count * 6 }
            // Readers beside the running hosts, counted, not timed: a starved machine may have
            // answered only one round by the time the polls are done (2 answers at load 17).
            let read = try await eventually(timeout: 40) { answered.withLock { $0 } >= 4 }
            readers.cancel()
            let answers = try await readers.value
            await fleet.stopCleanly()
            #expect(polled, "four sources every 3 s were not polled 6 times each within 50 s")

            let requests = try await server.requests()
            let runs = try await Hosts.runs(database)
            var windows = 0
            for name in names {
                let times = requests.filter { $0.path == Hosts.path(name) }.map(\.time)
                let ofSource = Hosts.runs(runs, of: name, requests: times.count)
                #expect(ofSource.count == times.count, "\(name): \(times.count) requests, \(ofSource.count) runs: \(ofSource.map { $0.text("status") ?? "" })")
                #expect(ofSource.dropLast().allSatisfy { $0.text("status") == "succeeded" }, "\(name): \(ofSource.map { $0.text("error") ?? "ok" })")
                Hosts.expectOncePerInterval(Hosts.polls(times, ofSource), interval: 3, source: name)
                windows += times.count
            }
            #expect(try await database.query("SELECT count(*) FROM ingest_runs WHERE status = 'failed'") == [["0"]])
            #expect(read && answers.count >= 4, "\(answers.count) reader commands answered while the hosts ran")
            for answer in answers { #expect(answer.status == 0, "a reader failed: \(answer.stderr)") }
            for (host, process) in fleet.processes { #expect(!process.stderrSoFar.contains("25006"), "\(host): \(process.stderrSoFar.suffix(1500))") }
            print("PgBouncer transaction mode, one role: \(windows) windows polled once each, \(runs.count) runs recorded, \(answers.count) reader commands answered")
        }
    }

    // MARK: 2. A partition that closes nothing

    @Test("a partition that closes nothing (a proxy that stops forwarding) while a host's poll is inside its transaction: the other host polls within lease + one interval; the cut-off host's poll never commits; cut off, it stops on SIGTERM within seconds, and run --once within its deadline")
    func partition() async throws {
        let (lease, interval) = (6.0, 2.0)
        let server = try await LoopbackServer.start(routes: Hosts.routes(["p1"]))
        try await PostgresDatabase.with { database in
            let migrated = try await run("incident-scheduler", ["migrate", "--database", database.uri])
            try #require(migrated.status == 0, "migrate failed: \(migrated.stderr)")
            let proxy = try PartitionProxy(database: database.uri)
            defer { proxy.stop() }
            let config = try Hosts.config(server, names: ["p1"], interval: "2s", lease: "6s")
            // Polls wait inside their transaction while a session of the test locks incidents.
            let locker = try RunningProcess(PostgresDatabase.bin.appendingPathComponent("psql"), ["-X", "-d", database.uri, "-c", """
                BEGIN; LOCK TABLE incidents IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(120);
                """])
            defer { if locker.process.isRunning { locker.send(SIGKILL) } }
            // host-a, reaching the database through the proxy, starts the poll.
            let cutOff = try SchedulerFleet([("host-a", ["run", "--loop", "--config", config, "--database", proxy.uri], [])])
            defer { cutOff.kill() }
            let waiting = try await eventually(timeout: 20) {
                try await database.query("SELECT count(*) FROM pg_locks WHERE relation = 'incidents'::regclass AND NOT granted") == [["1"]]
            }
            try #require(waiting, "host-a's poll did not reach the locked table: \(cutOff.processes[0].process.stderrSoFar.suffix(1500))")
            #expect(try await database.query("SELECT holder_host FROM source_leases WHERE expires_at IS NOT NULL") == [["host-a"]])
            let other = try SchedulerFleet([("host-b", ["run", "--loop", "--config", config, "--database", database.uri], [])])
            defer { other.kill() }

            // The partition: then the lock goes, and host-a's statement ends on a server it cannot hear.
            proxy.pause()
            let partitioned = monotonicNow()
            // (Its backend, in pg_sleep, would not notice psql's end: it is terminated.)
            _ = try await database.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(120)%' AND pid <> pg_backend_pid()")
            // At least one: on a loaded machine this loop may look only after host-b's second turn.
            let tookOver = try await eventually(timeout: lease + interval + 20) {
                try await database.query("SELECT count(*) > 0 FROM ingest_runs WHERE host = 'host-b' AND status = 'succeeded'") == [["t"]]
            }
            let succeededAfter = monotonicNow() - partitioned
            #expect(tookOver, "host-b did not poll p1 successfully within \(lease + interval + 20) s of the partition: \(other.processes[0].process.stderrSoFar.suffix(2000))")
            let requests = try await server.requests().map(\.time)
            let firstAfter = try #require(requests.first { $0 > partitioned }, "no request after the partition") - partitioned
            // The lease runs out at most `lease` after the partition (renewed before it), then one
            // turn of host-b: an interval, its 10 % jitter, and the 0.9-interval rule's rounding.
            #expect(firstAfter <= lease + interval * 1.1 + 2 + 1, "host-b's first request \(firstAfter) s after the partition")

            // Cut off, host-a gives the poll up by itself when its lease runs out by its own clock
            // (the lease keeper), before any signal: on a starved machine the line may come some
            // seconds after host-b's takeover, so it is awaited here, not after SIGTERM.
            let noticed = try await eventually(timeout: 20) {
                cutOff.processes[0].process.stderrSoFar.contains("event=lease.lost source=p1")
            }
            #expect(noticed, "host-a did not log the lost lease: \(cutOff.processes[0].process.stderrSoFar.suffix(2000))")

            // Still cut off: SIGTERM stops host-a promptly, and a run --once ends within its deadline.
            // Each process is timed from its own start to its own exit, awaited side by side.
            let launched = monotonicNow()
            let once = try SchedulerFleet([("host-c", ["run", "--once", "--deadline", "3s", "--config", config, "--database", proxy.uri], [])])
            defer { once.kill() }
            async let onceEnded = { () async -> (ProcessResult, Double) in
                let result = await once.processes[0].process.finished(timeout: 40)
                return (result, monotonicNow() - launched)
            }()
            let terminated = monotonicNow()
            cutOff.processes[0].process.send(SIGTERM)
            let stopped = await cutOff.processes[0].process.finished(timeout: 30)
            let stopSeconds = (cutOff.processes[0].process.exitedAt ?? monotonicNow()) - terminated
            let (onceResult, onceSeconds) = await onceEnded
            // Before the fix it never stopped while cut off (blocked in libpq for as long as the
            // partition lasts, here until `resume` below): exiting by itself while still cut off is
            // the point; 20 s leaves a loaded machine room (9 s seen with two suites and stress-ng
            // on 2 cores) and is far below systemd's 90 s stop timeout.
            #expect(stopSeconds < 20, "SIGTERM took \(stopSeconds) s: \(stopped.stderr.suffix(2000))")
            #expect(!stopped.signaled, "host-a did not exit by itself: \(stopped.stderr.suffix(2000))")
            // Its deadline bounds reaching the database (libpq's connect_timeout): on its own log's
            // clock it gives up about 3 s after it starts (1 s stamps, and its start-up work before
            // connecting); before the deadline bounded the connect, 10.5 s. Then it exits by itself.
            // The wall time seen here also holds this test's own wake-up, late on a starved machine
            // (13.2 s for a 3 s failure at load 18), so it only shows that the process ended.
            let began = Self.loggedTime(onceResult.stderr, "scheduler.start"), failed = Self.loggedTime(onceResult.stderr, "database.unavailable")
            let connecting = try #require(failed.flatMap { failed in began.map { failed.timeIntervalSince($0) } },
                                          "no start or database.unavailable line: \(onceResult.stderr.suffix(2000))")
            #expect(connecting <= 3 + 2, "run --once gave up reaching the database \(connecting) s after its start")
            #expect(onceResult.status == 1 && !onceResult.signaled, "run --once: exit \(onceResult.status) after \(onceSeconds) s: \(onceResult.stderr.suffix(2000))")

            // The network comes back: what host-a had sent arrives, and nothing of its poll commits.
            proxy.resume()
            try await Task.sleep(for: .seconds(2))
            await other.stopCleanly()
            #expect(try await database.query("SELECT count(*) FROM ingest_runs WHERE host = 'host-a' AND status = 'succeeded'") == [["0"]])
            #expect(try await database.query("SELECT count(*) FROM ingest_runs WHERE status = 'running'") == [["0"]])
            let first = try await database.query("SELECT host, inserted FROM ingest_runs WHERE status = 'succeeded' ORDER BY id LIMIT 1")
            #expect(first == [["host-b", "3"]], "the first poll stored: \(first)")
            // host-a's backend, in its transaction when the network went, ends once the proxy
            // passes on host-a's closed connection: awaited, as that takes longer on a busy machine.
            let noneLeft = try await eventually(timeout: 20) {
                try await database.query("SELECT count(*) FROM pg_stat_activity WHERE state LIKE 'idle in transaction%'") == [["0"]]
            }
            #expect(noneLeft, "a session stayed idle in transaction")
            print(String(format: "partition: host-b's first request %.1f s and first stored poll %.1f s after it (lease 6 s, interval 2 s); SIGTERM %.1f s; run --once --deadline 3s ended after %.1f s",
                         firstAfter, succeededAfter, stopSeconds, onceSeconds))
        }
    }

    // MARK: 3. Clocks 10 minutes apart

    /// libfaketime shifts a host's wall clock. A loop cannot run 10 min *behind* under it: the
    /// shift reaches the timed waits Dispatch uses and the loop's sleeps stall (one poll, then
    /// nothing, with FAKETIME=-10 as with -10m); `run --once` does not sleep, so the host behind
    /// runs that.
    @Test("a host 10 min ahead (libfaketime) polls, then is killed: another host takes its sources within lease + one interval; a run --once 10 min behind runs beside it; both skewed hosts warn, and no incident is seen, and no run started, off the server's clock")
    func skewedClocks() async throws {
        let (lease, interval) = (6.0, 2.0)
        let names = ["f1", "f2"]
        let server = try await LoopbackServer.start(routes: Hosts.routes(names))
        try await PostgresDatabase.with { database in
            let migrated = try await run("incident-scheduler", ["migrate", "--database", database.uri])
            try #require(migrated.status == 0, "migrate failed: \(migrated.stderr)")
            let config = try Hosts.config(server, names: names, interval: "2s", lease: "6s")
            let arguments = ["run", "--loop", "--config", config, "--database", database.uri]
            // libfaketime preloaded into the scheduler itself (faketime(1) would run it as a
            // child, which kill -9 of the host would not reach); only the wall clock is shifted.
            func shifted(_ offset: String) -> [String: String] {
                ["K": "multi+host/key=", "LD_PRELOAD": "/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1",
                 "FAKETIME": offset, "FAKETIME_DONT_FAKE_MONOTONIC": "1"]
            }
            let fast = try SchedulerFleet([("host-fast", arguments, [])], environment: shifted("+10m"))
            defer { fast.kill() }
            let polling = try await eventually(timeout: 20) {
                try await database.query("SELECT count(DISTINCT source) FROM ingest_runs WHERE host = 'host-fast' AND status = 'succeeded'") == [["2"]]
            }
            try #require(polling, "host-fast did not poll both sources: \(fast.processes[0].process.stderrSoFar.suffix(1500))")
            let other = try SchedulerFleet(hosts: ["host-b"], arguments)
            defer { other.kill() }
            try await Task.sleep(for: .seconds(3))
            let fastLog = fast.processes[0].process.stderrSoFar
            fast.kill()
            let killed = monotonicNow()
            let tookOver = try await eventually(timeout: lease + interval + 15) {
                try await database.query("SELECT count(DISTINCT source) FROM ingest_runs WHERE host = 'host-b' AND status = 'succeeded'") == [["2"]]
            }
            let took = monotonicNow() - killed
            #expect(tookOver, "host-b did not take both sources within \(lease + interval + 15) s: \(other.processes[0].process.stderrSoFar.suffix(2000))")
            let requests = try await server.requests()
            var latest = 0.0
            for name in names {
                let after = try #require(requests.first { $0.path == Hosts.path(name) && $0.time > killed }, "\(name) not polled after the kill")
                latest = max(latest, after.time - killed)
            }
            #expect(latest <= lease + interval * 1.1 + 2 + 1, "the last source was polled again \(latest) s after the kill")
            let behind = try SchedulerFleet([("host-slow", ["run", "--once", "--config", config, "--database", database.uri], [])],
                                            environment: shifted("-10m"))
            let once = await behind.finished(timeout: 60)
            await other.stopCleanly()
            #expect(once.first?.1.status == 0, "\(once.first?.1.stderr.suffix(1500) ?? "")")
            #expect(fastLog.contains("event=clock.skew offset_s=-600"), "\(fastLog.suffix(1500))")
            #expect(once.first?.1.stderr.contains("event=clock.skew offset_s=600") == true, "\(once.first?.1.stderr.suffix(1500) ?? "")")
            // Times from the server's clock (to the second), whichever host wrote them.
            #expect(try await database.query("SELECT count(*) FROM incidents WHERE last_seen_at > now() OR first_seen_at > now()") == [["0"]])
            #expect(try await database.query("SELECT count(*) FROM ingest_runs WHERE started_at > now() OR started_at < now() - interval '2 minutes'") == [["0"]])
            #expect(try await database.query("SELECT count(*) FROM source_leases WHERE last_started_at > now() OR last_started_at < now() - interval '2 minutes'") == [["0"]])
            print(String(format: "skewed clocks: the sources of a host 10 min ahead taken over %.1f s after it was killed (last first request %.1f s; lease 6 s, interval 2 s)", took, latest))
        }
    }

    // MARK: 4. A crash and its recovery

    @Test("PostgreSQL crashes (pg_ctl -m immediate) under two run --loop hosts for 12 s and starts again (crash recovery): every poll the hosts logged is in the run log once the server is back, failed ones included; with the server down, SIGTERM stops both within seconds")
    func crashRecovery() async throws {
        let names = ["c1", "c2", "c3"]
        let server = try await LoopbackServer.start(routes: Hosts.routes(names))
        try await ThrowawayPostgres.with { postgres in
            try await PostgresDatabase.with(server: postgres.uri) { database in
                let migrated = try await run("incident-scheduler", ["migrate", "--database", database.uri])
                try #require(migrated.status == 0, "migrate failed: \(migrated.stderr)")
                let config = try Hosts.config(server, names: names, interval: "2s", lease: "6s")
                let fleet = try SchedulerFleet(hosts: ["host-a", "host-b"], ["run", "--loop", "--config", config, "--database", database.uri])
                defer { fleet.kill() }
                let polling = try await eventually(timeout: 20) {
                    try await database.query("SELECT count(DISTINCT source) FROM ingest_runs WHERE status = 'succeeded'") == [["3"]]
                }
                try #require(polling, "the hosts did not poll every source: \(fleet.processes.map { $0.process.stderrSoFar.suffix(1000) })")
                // Down for longer than a host keeps trying to connect (10 s): polls fail, and so
                // does recording them.
                try await postgres.crash()
                try await Task.sleep(for: .seconds(12))
                try await postgres.start()
                // Recorded late once the server is back, at the hosts' next polls.
                let recovered = try await eventually(timeout: 30) {
                    let logged = fleet.processes.map { Self.loggedRuns($0.process.stderrSoFar) }.reduce(0, +)
                    let stored = Int((try? await database.query("SELECT count(*) FROM ingest_runs"))?.first?.first ?? "") ?? -1
                    let failed = Int((try? await database.query("SELECT count(*) FROM ingest_runs WHERE status = 'failed'"))?.first?.first ?? "") ?? 0
                    return failed > 0 && stored == logged
                }
                let logged = fleet.processes.map { Self.loggedRuns($0.process.stderrSoFar) }.reduce(0, +)
                let stored = try await database.query("SELECT status, count(*) FROM ingest_runs GROUP BY status ORDER BY status")
                #expect(recovered, "\(logged) runs logged, stored: \(stored); \(fleet.processes.map { $0.process.stderrSoFar.suffix(1500) })")
                let late = fleet.processes.map { $0.process.stderrSoFar.components(separatedBy: "event=run.recorded_late").count - 1 }.reduce(0, +)

                // The server down: SIGTERM ends both promptly (their last runs cannot be recorded).
                for (host, process) in fleet.processes { #expect(process.process.isRunning, "\(host) exited: \(process.stderrSoFar.suffix(2000))") }
                try await postgres.crash()
                let asked = monotonicNow()
                let results = await fleet.stop(timeout: 30)
                #expect(results.count == 2)
                // Each host's own exit, not this test's later wake-up (10.5 s seen on CI for exits
                // the hosts logged within a second).
                let seconds = fleet.processes.map { ($0.process.exitedAt ?? monotonicNow()) - asked }.max() ?? 0
                #expect(seconds < 8, "SIGTERM with the server down took \(seconds) s: \(results.map { "\($0.0): \($0.1.stderr.suffix(1200))" })")
                for (host, result) in results { #expect(!result.signaled && [0, 143].contains(result.status), "\(host): \(result.status) \(result.stderr.suffix(1500))") }
                try await postgres.start()
                print(String(format: "crash recovery: %d runs logged, all in the run log (%@; %d late recordings); SIGTERM with the server down: %.1f s",
                             logged, stored.map { $0.joined(separator: " ") }.joined(separator: ", "), late, seconds))
            }
        }
    }

    // MARK: 5. Two loops on one host

    @Test("two run --loop on one host (the same host name, two processes): every source polled once per interval between them, every request a run")
    func twoLoopsOnOneHost() async throws {
        let names = ["h1", "h2", "h3"]
        let server = try await LoopbackServer.start(routes: Hosts.routes(names))
        try await PostgresDatabase.with { database in
            let migrated = try await run("incident-scheduler", ["migrate", "--database", database.uri])
            try #require(migrated.status == 0, "migrate failed: \(migrated.stderr)")
            let config = try Hosts.config(server, names: names, interval: "2s", lease: "6s")
            let fleet = try SchedulerFleet(hosts: ["same-host", "same-host"], ["run", "--loop", "--config", config, "--database", database.uri])
            defer { fleet.kill() }
            let polled = try await eventually(timeout: 30) { try await server.requests().count >= names.count * 5 }
            await fleet.stopCleanly()
            #expect(polled, "three sources every 2 s were not polled 5 times each within 30 s")
            let requests = try await server.requests()
            let runs = try await Hosts.runs(database)
            for name in names {
                let times = requests.filter { $0.path == Hosts.path(name) }.map(\.time)
                let ofSource = Hosts.runs(runs, of: name, requests: times.count)
                #expect(ofSource.count == times.count, "\(name): \(times.count) requests, \(ofSource.count) runs")
                Hosts.expectOncePerInterval(Hosts.polls(times, ofSource), interval: 3, source: name)
            }
            print("two loops on one host: \(requests.count) polls of \(names.count) sources, none within 0.75 interval of another")
        }
    }

    /// The runs a scheduler's log reports (one `ingest.*` line per run; dry runs aside).
    static func loggedRuns(_ log: String) -> Int {
        ["finished", "incomplete", "failed", "cancelled", "skipped"].map { log.components(separatedBy: "event=ingest.\($0) ").count - 1 }.reduce(0, +)
    }
}

/// `Tests/Fixtures/tools/partition_proxy.py` in front of the database of a `postgresql://` URI:
/// ``pause()`` stops forwarding without closing anything, ``resume()`` delivers what was held.
final class PartitionProxy: @unchecked Sendable {  // set once, in init
    let process: RunningProcess
    /// The database through the proxy.
    let uri: String

    init(database: String) throws {
        var target = try #require(URLComponents(string: database))
        process = try RunningProcess(URL(fileURLWithPath: "/usr/bin/python3"),
                                     [TestPaths.fixture("tools/partition_proxy.py").path, try #require(target.host), String(try #require(target.port))])
        let deadline = Date().addingTimeInterval(10)
        while Int(process.stdoutSoFar.trimmingCharacters(in: .whitespacesAndNewlines)) == nil && Date() < deadline { usleep(20_000) }
        target.port = try #require(Int(process.stdoutSoFar.trimmingCharacters(in: .whitespacesAndNewlines)), "the proxy did not start: \(process.stderrSoFar)")
        uri = try #require(target.string)
    }

    func pause() { process.send(SIGUSR1) }
    func resume() { process.send(SIGUSR2) }

    func stop() {
        if process.process.isRunning { process.send(SIGKILL) }
        _ = process.wait(timeout: 10)
    }
}


/// Debian's PgBouncer on loopback in front of the database `database` (a `postgresql://` URI
/// on the test server), in transaction mode with `poolSize` server connections per database
/// and user, trusting the one role the tests use. Runs as the `postgres` user (`-u`: the
/// tests run as root, which PgBouncer refuses).
final class PgBouncer: @unchecked Sendable {  // set once, in init
    let process: RunningProcess
    /// The database through the pooler.
    let uri: String
    private let directory: URL

    init(database: String, poolSize: Int) throws {
        var target = try #require(URLComponents(string: database))
        let (host, port, user) = (try #require(target.host), try #require(target.port), try #require(target.user))
        directory = try TestPaths.temporaryDirectory("pgbouncer")
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: directory.path)
        let listen = try Self.freePort()
        let config = directory.appendingPathComponent("pgbouncer.ini")
        try """
            [databases]
            * = host=\(host) port=\(port)
            [pgbouncer]
            listen_addr = 127.0.0.1
            listen_port = \(listen)
            unix_socket_dir =
            auth_type = trust
            auth_file = \(directory.appendingPathComponent("users.txt").path)
            pool_mode = transaction
            default_pool_size = \(poolSize)
            max_client_conn = 500
            """.write(to: config, atomically: true, encoding: .utf8)
        try "\"\(user)\" \"\"\n".write(to: directory.appendingPathComponent("users.txt"), atomically: true, encoding: .utf8)
        process = try RunningProcess(URL(fileURLWithPath: "/usr/sbin/pgbouncer"), ["-u", "postgres", config.path])
        target.port = listen
        uri = try #require(target.string)
        // Listening once it logs so.
        let deadline = Date().addingTimeInterval(10)
        while !process.stderrSoFar.contains("listening on 127.0.0.1:\(listen)") && process.process.isRunning && Date() < deadline {
            usleep(20_000)
        }
        try #require(process.stderrSoFar.contains("listening on"), "pgbouncer did not start: \(process.stderrSoFar)")
    }

    func stop() {
        if process.process.isRunning { process.send(SIGTERM) }
        _ = process.wait(timeout: 10)
    }

    /// A TCP port nobody listens on now.
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        try #require(bound, "no free port")
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
