import Foundation
import IncidentCore
import Synchronization
@testable import IncidentPostgres
import TestSupport
import Testing

@Suite("PostgreSQL connection strings: recognized, checked, never shown with a secret")
struct PostgresLocationTests {
    @Test("URIs and keyword strings are PostgreSQL; paths are SQLite", arguments: [
        ("postgresql://ingest@db.internal:5432/incidents?sslmode=verify-full", true),
        ("postgres://db/incidents", true),
        ("POSTGRESQL://db/incidents", true),
        ("host=db.internal dbname=incidents user=ingest", true),
        ("dbname = incidents", true),
        ("service=incidents", true),
        ("/var/lib/trafficincidents/incidents.sqlite", false),
        (":memory:", false),
        ("incidents.sqlite", false),
        ("./a=b.sqlite", false),
        ("data/host=x.sqlite", false),
    ])
    func recognizes(database: String, isPostgres: Bool) {
        #expect(PostgresLocation.recognizes(database) == isPostgres)
    }

    @Test("a password in the connection string is refused, and the message does not repeat it", arguments: [
        "postgresql://ingest:s3cret-pw@db.internal/incidents",
        "host=db.internal dbname=incidents user=ingest password=s3cret-pw",
        "postgresql://db.internal/incidents?password=s3cret-pw",
        "host=db sslpassword=s3cret-pw",
    ])
    func refusesPassword(connectionString: String) {
        #expect {
            _ = try PostgresLocation(connectionString)
        } throws: { error in
            let text = String(describing: error)
            return !text.contains("s3cret") && text.contains("PGPASSWORD") && text.contains("~/.pgpass")
        }
        #expect(PostgresLocation.passwords(in: connectionString) == ["s3cret-pw"])
    }

    @Test("the shown form keeps user, host, port and database only", arguments: [
        ("postgresql://ingest@db.internal:5432/incidents?sslmode=verify-full&application_name=x", "postgresql://ingest@db.internal:5432/incidents"),
        ("host=db.internal dbname=incidents user=ingest sslmode=require", "postgresql://ingest@db.internal/incidents"),
        ("postgresql:///incidents", "postgresql:///incidents"),
    ])
    func redacted(connectionString: String, shown: String) throws {
        #expect(try PostgresLocation(connectionString).description == shown)
    }

    @Test("a string libpq cannot read is a configuration error naming libpq's reason")
    func unreadable() {
        #expect {
            _ = try PostgresLocation("host=db dbname='unterminated")
        } throws: { error in
            String(describing: error).contains("unterminated quoted string")
        }
    }

    @Test("connecting to a database that does not exist says so; a server that is not there says where, without waiting forever")
    func connectionErrors() throws {
        let missing = try TestServer.location(database: "no_such_database_here")
        #expect {
            _ = try PostgresStore(missing, clock: .fixed(t0), access: .read, reconnectSeconds: 0)
        } throws: { error in
            (error as? PostgresError)?.isMissingDatabase == true && String(describing: error).contains(missing.description)
        }
        let nobody = try PostgresLocation("postgresql://nobody@127.0.0.1:1/incidents")
        #expect {
            _ = try PostgresStore(nobody, clock: .fixed(t0), reconnectSeconds: 1)
        } throws: { error in
            (error as? PostgresError)?.isServerUnavailable == true
                && String(describing: error).contains("connecting to postgresql://nobody@127.0.0.1:1/incidents")
        }
    }
}

@Suite("PostgreSQL migrations")
struct PostgresMigrationTests {
    @Test("every Migrations/postgres/*.sql file is embedded, in order, and applies to a fresh database once")
    func fresh() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: TestPaths.packageRoot.appendingPathComponent("Migrations/postgres").path)
            .filter { $0.hasSuffix(".sql") }.sorted()
        let migrator = try PostgresMigrator.bundled()
        #expect(migrator.migrations.map(\.name) == files)
        #expect(migrator.migrations.map(\.version) == Array(1...files.count))
        try TestServer.withDatabase { name in
            let store = try PostgresStore(try TestServer.location(database: name), clock: .fixed(t0))
            #expect(try store.migrationStates() == migrator.migrations.map { MigrationState(version: $0.version, name: $0.name, appliedAt: t0) })
            #expect(try store.migrate() == [])
            #expect(Set(["incidents", "incident_revisions", "ingest_runs", "rejected_records", "source_state", "source_leases",
                         "schema_migrations"]).isSubset(of: Set(try store.column("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
                            .compactMap { $0 })))
            #expect(try store.column("SELECT checksum FROM schema_migrations ORDER BY version") == migrator.migrations.map(\.checksum))
        }
    }

    @Test("six hosts starting at once on a new database: each migration is applied exactly once and every host starts")
    func concurrentHosts() throws {
        try TestServer.withDatabase { name in
            let location = try TestServer.location(database: name)
            let failures = Mutex<[String]>([])
            DispatchQueue.concurrentPerform(iterations: 6) { host in
                do {
                    _ = try PostgresStore(location, clock: .fixed(t0.adding(seconds: Int64(host))))
                } catch {
                    failures.withLock { $0.append(String(describing: error)) }
                }
            }
            #expect(failures.withLock { $0 } == [])
            let store = try PostgresStore(location, clock: .fixed(t0), access: .inspect)
            #expect(try integer(store, "SELECT count(*) FROM schema_migrations") == (try PostgresMigrator.bundled()).migrations.count)
            #expect(try store.migrationStates().allSatisfy { $0.appliedAt != nil })
        }
    }

    @Test("an edited migration, a newer schema and a reader on a database that needs migrating are refused, and nothing changes")
    func refusals() throws {
        try TestServer.withDatabase { name in
            let location = try TestServer.location(database: name)
            let bundled = try PostgresMigrator.bundled()
            #expect(throws: MigrationError.pending(names: bundled.migrations.map(\.name))) {
                _ = try PostgresStore(location, clock: .fixed(t0), access: .read)
            }
            _ = try PostgresStore(location, clock: .fixed(t0), migrator: PostgresMigrator(migrations: [bundled.migrations[0]]))
            #expect(throws: MigrationError.pending(names: bundled.migrations.dropFirst().map(\.name))) {
                _ = try PostgresStore(location, clock: .fixed(t0), access: .read)
            }
            var edited = bundled.migrations
            edited[0].sql += "\nCREATE TABLE sneaky (x int);"
            #expect {
                _ = try PostgresStore(location, clock: .fixed(t0), migrator: PostgresMigrator(migrations: edited))
            } throws: { error in
                guard case MigrationError.checksumMismatch(let name, _, _) = error else { return false }
                return name == "0001_incidents.sql"
            }
            let inspector = try PostgresStore(location, clock: .fixed(t0), access: .inspect)
            #expect(try inspector.column("SELECT to_regclass('sneaky')::text") == [nil])
            #expect(try inspector.column("SELECT to_regclass('source_leases')::text") == [nil])
            let future = try Migration(name: "0099_future.sql", sql: "CREATE TABLE future (x int);")
            _ = try PostgresStore(location, clock: .fixed(t0), migrator: PostgresMigrator(migrations: bundled.migrations + [future]))
            #expect(throws: MigrationError.newerSchema(databaseVersion: 99, knownVersion: bundled.latestVersion)) {
                _ = try PostgresStore(location, clock: .fixed(t0))
            }
        }
    }

    @Test("a reader's session is read-only: a poll through it fails and stores nothing")
    func readerCannotWrite() throws {
        try TestServer.withDatabase { name in
            let location = try TestServer.location(database: name)
            let writer = try PostgresStore(location, clock: .fixed(t0))
            let reader = try PostgresStore(location, clock: .fixed(t0), access: .read)
            #expect {
                try poll(reader, live("A"), at: t0)
            } throws: { error in
                (error as? PostgresError)?.sqlState == "25006"
            }
            try poll(writer, live("A"), at: t0)
            #expect(try allRows(reader).map(\.incident.externalID) == ["A"])
        }
    }
}

@Suite("PostgreSQL connections that break")
struct PostgresConnectionTests {
    @Test("the server ends the connection mid-poll: the poll fails, nothing of it is stored, the next poll reconnects")
    func connectionLostMidPoll() throws {
        try TestServer.withDatabase { name in
            let store = try PostgresStore(try TestServer.location(database: name), clock: .fixed(t0), connections: 1)
            try poll(store, live("A"), at: t0)
            // A producer that has the server end this session (as a restart would) half-way through.
            let records = (0..<2000).map { FeedRecord.incident(incident("N\($0)")) }
            #expect {
                try store.ingest(PollContext(source: "gits", startedAt: t1)) { sink in
                    for (index, record) in records.enumerated() {
                        if index == 1000 {
                            try TestServer.administer("""
                                SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '\(name)' AND pid <> pg_backend_pid()
                                """)
                        }
                        if case .incident(let incident) = record { try sink.upsert(incident) }
                    }
                    return .complete
                }
            } throws: { error in
                (error as? PostgresError)?.isConnectionFailure == true
            }
            try store.recordRun(IngestRun(source: "gits", startedAt: t1, finishedAt: t1, status: .failed, error: "connection lost"))
            #expect(try allRows(store).map(\.incident.externalID) == ["A"])
            #expect(try runLog(store).map(\.status) == [.succeeded, .failed])
            #expect(try counts(store, [incident("A"), incident("B")], at: t2) == IngestCounts(fetched: 2, inserted: 1, unchanged: 1))
        }
    }

    @Test("fencing: a poll commits only while its holder still holds the lease on the server's clock; a lease taken by another or run out rolls the whole poll back")
    func pollCommitsOnlyUnderItsLease() throws {
        try TestServer.withDatabase { name in
            let store = try PostgresStore(try TestServer.location(database: name), clock: .fixed(t0))
            let now = UTCInstant(secondsSince1970: Int64(Date().timeIntervalSince1970))
            let a = LeaseHolder(host: "host-a", pid: 11, token: "a"), b = LeaseHolder(host: "host-b", pid: 22, token: "b")
            func fencedPoll(_ holder: LeaseHolder, _ id: String) throws -> IngestRun {
                try store.ingest(PollContext(source: "gits", startedAt: now, leaseHolder: holder),
                                 ListProducer(records: live(id), verdict: .complete).callAsFunction)
            }
            func refused(_ error: any Error) -> Bool {
                "\(error)".contains("this scheduler no longer holds the lease of gits (it ran out or another host took it)")
            }
            _ = try store.claim(source: "gits", holder: a, now: now, leaseSeconds: 60, notStartedAfter: nil)
            #expect(try fencedPoll(a, "A").status == .succeeded)
            // Another holder's poll (the host that was cut off while a took over).
            #expect { try fencedPoll(b, "B") } throws: { refused($0) }
            // a's lease, claimed two minutes ago for one, has run out on the server's clock.
            _ = try store.claim(source: "gits", holder: a, now: now.adding(seconds: -120), leaseSeconds: 60, notStartedAfter: nil)
            #expect { try fencedPoll(a, "C") } throws: { refused($0) }
            // Released: not held either.
            _ = try store.claim(source: "gits", holder: a, now: now, leaseSeconds: 60, notStartedAfter: nil)
            try store.release(source: "gits", holder: a)
            #expect { try fencedPoll(a, "D") } throws: { refused($0) }
            // Nothing of the refused polls, not even their runs.
            #expect(try allRows(store).map(\.incident.externalID) == ["A"])
            #expect(try runLog(store).map(\.status) == [.succeeded])
        }
    }

    @Test("a poll blocked inside its transaction is interrupted from another thread: it fails at once, the server ends its statement, nothing is stored")
    func interruptBlockedPoll() throws {
        try TestServer.withDatabase { name in
            let location = try TestServer.location(database: name)
            let store = try PostgresStore(location, clock: .fixed(t0))
            let locker = try Connection(location: location, readOnly: false)
            try locker.execute("BEGIN; LOCK TABLE incidents IN ACCESS EXCLUSIVE MODE", context: "locking")
            let outcome = Mutex<(any Error)?>(nil)
            let finished = DispatchSemaphore(value: 0)
            Thread {
                do { try poll(store, live("A"), at: t0) } catch { outcome.withLock { $0 = error } }
                finished.signal()
            }.start()
            // Waiting for the lock, inside its transaction.
            var waiting = false
            for _ in 0..<100 where !waiting {
                Thread.sleep(forTimeInterval: 0.05)
                waiting = try locker.query("SELECT count(*) FROM pg_locks WHERE relation = 'incidents'::regclass AND NOT granted",
                                           context: "watching").int(0, 0) == 1
            }
            try #require(waiting, "the poll never waited for the lock")
            let asked = Date()
            store.interrupt(source: "gits")
            #expect(finished.wait(timeout: .now() + 5) == .success)
            #expect(Date().timeIntervalSince(asked) < 2)
            #expect(outcome.withLock { $0 }.map { ($0 as? PostgresError)?.isConnectionFailure == true } == true)
            // The server cancelled the waiting statement: nobody waits for the lock any more.
            var gone = false
            for _ in 0..<50 where !gone {
                gone = try locker.query("SELECT count(*) FROM pg_locks WHERE relation = 'incidents'::regclass AND NOT granted",
                                        context: "watching").int(0, 0) == 0
                if !gone { Thread.sleep(forTimeInterval: 0.1) }
            }
            #expect(gone)
            try locker.execute("ROLLBACK", context: "unlocking")
            #expect(try allRows(store).isEmpty)
            #expect(try runLog(store).isEmpty)
            // The store works on: the broken connection was dropped.
            #expect(try poll(store, live("B"), at: t1).status == .succeeded)
        }
    }

    @Test("a server in crash recovery (SQLSTATE 57P03, not yet accepting connections) is one to connect to again shortly, as one starting up is")
    func recoveryIsTransient() {
        for message in ["connection to server at \"127.0.0.1\", port 5432 failed: FATAL:  the database system is not yet accepting connections DETAIL:  Consistent recovery state has not been yet reached.",
                        "connection to server at \"127.0.0.1\", port 5432 failed: FATAL:  the database system is starting up"] {
            #expect(PostgresError(message: message, context: "connecting").isServerUnavailable, "\(message)")
        }
        #expect(!PostgresError(message: "FATAL:  password authentication failed for user \"x\"", context: "connecting").isServerUnavailable)
    }

    @Test("a text holding U+0000, which PostgreSQL cannot store, sets its record aside instead of failing the poll")
    func nulCharacter() throws {
        try withStore(.postgres) { store in
            let run = try poll(store, [.incident(incident("A", description: "before\u{0}after")), .incident(incident("B"))], at: t0)
            #expect(run.counts == IngestCounts(fetched: 2, inserted: 1, rejected: 1))
            #expect(try store.rejections(runID: try #require(run.id)).map(\.record) == [
                RejectedRecord(externalID: "A", position: "record 1 of the response",
                               reason: "a text value holds the character U+0000, which PostgreSQL cannot store"),
            ])
        }
    }
}

@Suite("PostgreSQL roles and locks")
struct PostgresRoleTests {
    @Test("a role with SELECT rights only can query; its sessions cannot write even through the writer's port")
    func readerRole() throws {
        try TestServer.withDatabase { name in
            let writer = try PostgresStore(try TestServer.location(database: name), clock: .fixed(t0))
            try poll(writer, live("A", "B"), at: t0)
            let role = "reader_" + name
            try TestServer.administer("CREATE ROLE \(role) LOGIN")
            defer {
                _ = try? writer.column("DROP OWNED BY \(role)")
                try? TestServer.administer("DROP ROLE \(role)")
            }
            _ = try writer.column("GRANT USAGE ON SCHEMA public TO \(role)")
            _ = try writer.column("GRANT SELECT ON ALL TABLES IN SCHEMA public TO \(role)")
            var components = try TestServer.uri()
            components.user = role
            components.path = "/" + name
            let location = try PostgresLocation(try #require(components.string))
            let reader = try PostgresStore(location, clock: .fixed(t1), access: .read)
            #expect(try allRows(reader).map(\.incident.externalID) == ["A", "B"])
            #expect(try reader.statistics(matching: IncidentQuery(now: t1), utcOffsetSeconds: 0).total == 2)
            let opened = try PostgresStore(location, clock: .fixed(t1))  // up to date: nothing to migrate
            #expect {
                try poll(opened, live("A"), at: t1)
            } throws: { error in
                (error as? PostgresError)?.sqlState == "42501"  // insufficient privilege
            }
            #expect(try allRows(writer).allSatisfy { $0.lastSeenAt == t0 })
        }
    }
}

/// Statements are written with named parameters, as SQLite's are, and rewritten to libpq's
/// numbered ones (no server needed: the rewriting is text).
@Suite("PostgreSQL named parameters")
struct PostgresNamedParameterTests {
    @Test("each :name becomes $n in first-use order, a repeated name one parameter; casts, literals and comments are left alone")
    func rewriting() {
        let (sql, values) = NamedParameters.positional("""
            SELECT ':quoted', ":ident" FROM t -- :comment
            WHERE a = :run_id AND b::text = :source AND c < :at::timestamptz AND d = :run_id
            """, ["run_id": .integer(7), "source": .text("gits"), "at": .text("2024-01-01T00:00:00Z"), "unused": .null])
        #expect(sql == """
            SELECT ':quoted', ":ident" FROM t -- :comment
            WHERE a = $1 AND b::text = $2 AND c < $3::timestamptz AND d = $1
            """)
        #expect(values.map(\.text) == ["7", "gits", "2024-01-01T00:00:00Z"])
    }
}
