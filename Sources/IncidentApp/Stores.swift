import Foundation
import IncidentCore
import IncidentNetworking
import IncidentPostgres
import IncidentSQLite

/// The composition root for storage: turns the configured `database` value into the store
/// ports. The only place in IncidentApp that names a store implementation.
///
/// `database` is a PostgreSQL connection URI or keyword string (``PostgresLocation/recognizes(_:)``:
/// `postgresql://ingest@db.internal/incidents`, `host=db dbname=incidents`) or else an SQLite
/// file path (`:memory:` in tests). A PostgreSQL password is never part of `database`: libpq
/// reads PGPASSWORD, PGPASSFILE or ~/.pgpass.
enum Stores {
    /// Everything a scheduler command needs from its store.
    /// Async code calls it on the store's own threads (``StoreExecution``).
    typealias Writable = any IngestStore & IncidentReader & StoreAdministration & SourceLeases & StoreExecution
    /// What a reader needs: queries, on the store's own threads from async code (a server).
    typealias Readable = any IncidentReader & StoreExecution

    /// How long opening a PostgreSQL store, or reconnecting one, keeps trying while the server
    /// cannot be reached, unless a caller's own time limit is shorter (`run --once --deadline`).
    static let reconnectSeconds: Double = 10

    /// Opens (creating and migrating when needed) the store for writing; a scheduler gives its
    /// `leaseSeconds`, which bound how long PostgreSQL keeps a lock or an idle transaction of
    /// a host that stopped answering (``PostgresTimeouts/scheduler(leaseSeconds:)``), and its
    /// `concurrency`: PostgreSQL then keeps two connections beyond one per poll, so that lease
    /// renewals (and the metrics) never wait for polls blocked in the database (at least 4).
    /// `connectWithin`: seconds to keep trying to reach a PostgreSQL server that does not answer
    /// (default ``reconnectSeconds``).
    /// - Throws: the store's errors (cannot open or connect, not a database, migration failures,
    ///   a connection string holding a password).
    static func openForWriting(_ database: String, clock: UTCClock, leaseSeconds: Int64? = nil, concurrency: Int? = nil,
                               connectWithin: Double? = nil) throws -> Writable {
        if PostgresLocation.recognizes(database) {
            return try PostgresStore(PostgresLocation(database), clock: clock, access: .write, connections: max(4, (concurrency ?? 0) + 2),
                                     reconnectSeconds: connectWithin ?? Self.reconnectSeconds,
                                     timeouts: leaseSeconds.map(PostgresTimeouts.scheduler(leaseSeconds:)) ?? .standard)
        }
        return try SQLiteStore(path: database, clock: clock)
    }

    /// Checks that an existing SQLite database is one this binary may write, touching nothing
    /// (``SQLiteStore/checkAccepted(_:migrator:busyTimeout:)``); opening for writing checks it
    /// too, this is for what comes before the store is opened (a lock file beside it).
    static func checkAccepted(_ database: String) throws {
        guard !isPostgreSQL(database) else { return }
        try SQLiteStore.checkAccepted(database, migrator: try Migrator.bundled())
    }

    /// Opens an existing store for queries only; never creates or migrates it. A PostgreSQL
    /// session is read-only, so a role with SELECT rights suffices.
    /// - Throws: ``StoreMissing`` when there is no SQLite database; the store's errors otherwise
    ///   (a PostgreSQL database that does not exist is the server's error, which names it).
    static func openForReading(_ database: String, clock: UTCClock) throws -> Readable {
        if PostgresLocation.recognizes(database) {
            return try PostgresStore(PostgresLocation(database), clock: clock, access: .read, timeouts: .reading)
        }
        do {
            return try SQLiteStore(readingFrom: database, clock: clock)
        } catch StoreOpenError.missing(let path) {
            throw StoreMissing(database: path)
        }
    }

    /// Opens the store for schema administration (`migrate`, `migrate --status`) without
    /// applying or requiring migrations; `create` makes an SQLite database when missing (a
    /// PostgreSQL database is made by its administrator: `createdb`).
    static func openForInspection(_ database: String, clock: UTCClock, create: Bool = false,
                                  connectWithin: Double? = nil) throws -> any StoreAdministration {
        if PostgresLocation.recognizes(database) {
            return try PostgresStore(PostgresLocation(database), clock: clock, access: .inspect,
                                     reconnectSeconds: connectWithin ?? Self.reconnectSeconds)
        }
        return try SQLiteStore(inspecting: database, clock: clock, create: create)
    }

    /// The lock that gives one scheduler command at a time an SQLite database: a lock file
    /// beside it. nil for PostgreSQL, which schedulers on several hosts share at once: each
    /// poll is one transaction, and source leases (``SourceLeases``) keep two schedulers from
    /// polling one source.
    static func schedulingLocks(_ database: String) -> (any SchedulingLocks)? {
        isPostgreSQL(database) ? nil : SQLiteSchedulingLocks(databasePath: database)
    }

    /// Checks a `database` setting before anything uses it: a URI that is not PostgreSQL's is
    /// refused (never made into a path); in a PostgreSQL one, any password is registered for
    /// redaction first, so no message repeats it.
    /// - Throws: ``ConfigurationError`` (exit 78) for another URI, or when a PostgreSQL setting
    ///   holds a password or libpq cannot read it.
    static func checkSetting(_ database: String) throws {
        guard isPostgreSQL(database) else {
            if let scheme = uriScheme(database) {
                // `mysql://…`, `sqlite:///x`, `file:///x`, `postgresq://…`: made into a path, it would
                // become directories named after the URI.
                throw ConfigurationError("database \(Redaction.redact(database)): a \(scheme): URI is no database this program can open; "
                    + "give a postgresql:// (or postgres://) URI for PostgreSQL, or the path of an SQLite file")
            }
            return
        }
        let passwords = PostgresLocation.passwords(in: database)
        for password in passwords { Redaction.register(secret: password) }
        // What libpq would not read as a password must not be echoed either: `PASSWORD=` or
        // `?PassWord=` in any case (redacted as `name=value` wherever it appears), and the part
        // after a colon of a URI's user name written percent-encoded (`u%3Asecret@host`).
        for name in ["password", "sslpassword"] { Redaction.register(keyParameterName: name) }
        if let url = URL(string: database), let user = URLComponents(url: url, resolvingAgainstBaseURL: false)?.user,
           let colon = user.firstIndex(of: ":") {
            Redaction.register(secret: String(user[user.index(after: colon)...]))
        }
        do {
            _ = try PostgresLocation(database)
        } catch {
            // It was refused for a password libpq read (then shown redacted), or libpq cannot
            // read it: then it is not shown at all, as where it put a password is unknown.
            let shown = passwords.isEmpty
                ? "(not shown: libpq cannot read it, so it may hold a password anywhere)" : Redaction.redact(database)
            throw ConfigurationError("database \(shown): \(Redaction.redact("\(error)"))")
        }
    }

    /// SQLite: rewrites the database file without its free pages (`VACUUM`), giving the space
    /// that a prune freed back to the file system; returns the file's size before and after, in
    /// bytes. It needs free disk space about the database's size and holds the database's write
    /// lock while it runs (polls wait, up to the busy timeout). nil for PostgreSQL, whose
    /// autovacuum reuses freed space by itself.
    static func vacuum(_ store: Writable) throws -> (before: Int64, after: Int64)? {
        guard let sqlite = store as? SQLiteStore else { return nil }
        return try sqlite.withDatabase { db in
            func size() throws -> Int64 { (try db.scalarInt("PRAGMA page_count") ?? 0) * (try db.scalarInt("PRAGMA page_size") ?? 0) }
            let before = try size()
            try db.execute("VACUUM")
            return (before, try size())
        }
    }

    /// Whether two `database` settings name the same database: the same SQLite file (after
    /// resolving `.`, `..` and symbolic links), or PostgreSQL strings naming the same host, port
    /// and database, whatever the role (``PostgresLocation/database``).
    static func sameDatabase(_ a: String, _ b: String) -> Bool {
        if a == b { return true }
        switch (isPostgreSQL(a), isPostgreSQL(b)) {
        case (true, true):
            // The same database as another role is the same place (a reader's role on a
            // scheduler's host, whose configuration names the writer's).
            guard let first = try? PostgresLocation(a), let second = try? PostgresLocation(b) else { return false }
            return first.database == second.database
        case (false, false):
            // The file may not exist yet: its directory's links are resolved.
            func resolved(_ path: String) -> String {
                let url = URL(fileURLWithPath: path).standardizedFileURL
                return url.deletingLastPathComponent().resolvingSymlinksInPath().appendingPathComponent(url.lastPathComponent).path
            }
            return a != ":memory:" && b != ":memory:" && resolved(a) == resolved(b)
        default: return false
        }
    }

    /// Whether `database` names a PostgreSQL database rather than an SQLite file.
    static func isPostgreSQL(_ database: String) -> Bool { PostgresLocation.recognizes(database) }

    /// The scheme of `text` when it is written as a URI with an authority (`scheme://…`,
    /// RFC 3986 §3.1: a letter, then letters, digits, `+`, `-` or `.`), which is never meant as
    /// a file path; nil otherwise (`./a:b.sqlite`, `:memory:`).
    static func uriScheme(_ text: String) -> String? {
        guard let range = text.range(of: "://") else { return nil }
        let scheme = text[..<range.lowerBound]
        guard let first = scheme.first, first.isASCII, first.isLetter,
              scheme.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }) else { return nil }
        return String(scheme)
    }

    /// Refuses a connection string or other URI where an SQLite file's path is required
    /// (`copy --from`).
    /// - Throws: ``UsageError`` naming `option`.
    static func requireSQLitePath(_ path: String, option: String) throws {
        if isPostgreSQL(path) || uriScheme(path) != nil {
            throw UsageError("\(option): '\(isPostgreSQL(path) ? displayName(path) : Redaction.redact(path))' is not a path; it takes the path of an SQLite database file")
        }
    }

    /// Whether there may be a store at `database`: an SQLite file that exists (or `:memory:`);
    /// a PostgreSQL database always may (only its server can say, when it is opened).
    static func mayExist(_ database: String) -> Bool {
        isPostgreSQL(database) || database == ":memory:" || FileManager.default.fileExists(atPath: database)
    }

    /// `database` as it may be shown in logs and messages: a PostgreSQL connection string
    /// reduced to user, host, port and database; a path as is.
    static func displayName(_ database: String) -> String {
        guard PostgresLocation.recognizes(database) else { return database }
        return (try? PostgresLocation(database).description) ?? "a PostgreSQL connection string that libpq cannot read"
    }

    /// Copies the SQLite database at `sqlitePath` (incidents, revisions, runs, quarantined
    /// records, quota state, ids kept) into the PostgreSQL database `database`, migrating it
    /// first; it must hold no incidents or runs. Verifies every table's count and undoes the
    /// copy when one differs.
    /// - Throws: ``UsageError`` when `database` is not a PostgreSQL connection string;
    ///   ``StoreMissing`` when there is no SQLite database; ``StoreCopyError``; the stores' errors.
    static func copy(from sqlitePath: String, to database: String, clock: UTCClock) throws -> StoreCounts {
        guard PostgresLocation.recognizes(database) else {
            throw UsageError("--to: '\(database)' is not a PostgreSQL connection string (postgresql://user@host/dbname or host=… dbname=…)")
        }
        let source: SQLiteStore
        do {
            source = try SQLiteStore(readingFrom: sqlitePath, clock: clock)
        } catch StoreOpenError.missing(let path) {
            throw StoreMissing(database: path)
        }
        return try PostgresStore(PostgresLocation(database), clock: clock, access: .write).copy(from: source)
    }
}

extension Stores {
    /// What an error of the store means for the person running a command, when that is
    /// something this program's commands can fix (``ErrorText`` adds how).
    enum Problem {
        /// The database needs schema migrations that this open may not apply.
        case migrationsPending
        /// The database was migrated by a newer binary.
        case newerSchema
    }

    static func problem(_ error: any Error) -> Problem? {
        switch error {
        case MigrationError.pending: .migrationsPending
        case MigrationError.newerSchema: .newerSchema
        default: nil
        }
    }
}

/// The database does not exist yet (exit 66).
struct StoreMissing: Error, CustomStringConvertible {
    var database: String
    var description: String {
        "no incidents database at \(database); give the scheduler's configuration (--config FILE; /etc/trafficincidents/config.json is read when it exists) "
            + "or --database naming its database, or create it with `incident-scheduler run --once` using that same configuration"
    }
}
