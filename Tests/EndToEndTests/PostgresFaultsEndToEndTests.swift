import Foundation
import TestSupport
import Testing

/// Scheduler hosts on one PostgreSQL database under the faults of real deployments (issue 24):
/// a pooler in transaction mode, a network that stops answering without closing, clocks that
/// disagree, a server in crash recovery. Hosts are `incident-scheduler` processes in UTS
/// namespaces of their own (``SchedulerFleet``); polls are counted on the feed server's side.
/// Leases and intervals are short (seconds) so that takeovers happen within the test.
@Suite("End to end: PostgreSQL hosts under a pooler, a partition, skewed clocks and a restart")
struct PostgresFaultsEndToEndTests {
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
            let config = try Hosts.config(server, names: names, interval: "2s")
            let fleet = try SchedulerFleet(hosts: ["host-a", "host-b", "host-c"], ["run", "--loop", "--config", config, "--database", uri])
            defer { fleet.kill() }
            let migrated = try await eventually(timeout: 20) {
                // Until the first host has migrated, the table does not exist.
                (try? await database.query("SELECT count(*) > 0 FROM ingest_runs")) == [["t"]]
            }
            try #require(migrated, "no run recorded within 20 s: \(fleet.processes.map { $0.process.stderrSoFar.suffix(1500) })")
            let readers = Task { () -> [ProcessResult] in
                var results: [ProcessResult] = []
                while !Task.isCancelled {
                    results.append(try await run("incidents", ["list", "--database", uri, "--active", "--format", "json"]))
                    results.append(try await run("incidents", ["runs", "--database", uri, "--limit", "5"]))
                }
                return results
            }
            let polled = try await eventually(timeout: 40) { try await server.requests().count >= names.count * 6 }
            readers.cancel()
            let answers = try await readers.value
            await fleet.stopCleanly()
            #expect(polled, "four sources every 2 s were not polled 6 times each within 40 s")

            let requests = try await server.requests()
            let runs = try await Hosts.runs(database)
            var windows = 0
            for name in names {
                let times = requests.filter { $0.path == Hosts.path(name) }.map(\.time)
                let ofSource = Hosts.runs(runs, of: name, requests: times.count)
                #expect(ofSource.count == times.count, "\(name): \(times.count) requests, \(ofSource.count) runs: \(ofSource.map { $0.text("status") ?? "" })")
                #expect(ofSource.dropLast().allSatisfy { $0.text("status") == "succeeded" }, "\(name): \(ofSource.map { $0.text("error") ?? "ok" })")
                Hosts.expectOncePerInterval(Hosts.polls(times, ofSource), interval: 2, source: name)
                windows += times.count
            }
            #expect(try await database.query("SELECT count(*) FROM ingest_runs WHERE status = 'failed'") == [["0"]])
            #expect(answers.count >= 4)
            for answer in answers { #expect(answer.status == 0, "a reader failed: \(answer.stderr)") }
            for (host, process) in fleet.processes { #expect(!process.stderrSoFar.contains("25006"), "\(host): \(process.stderrSoFar.suffix(1500))") }
            print("PgBouncer transaction mode, one role: \(windows) windows polled once each, \(runs.count) runs recorded, \(answers.count) reader commands answered")
        }
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
