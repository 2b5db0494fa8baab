import IncidentCore
import IncidentPostgresMigrations

/// Applies the PostgreSQL migrations (`Migrations/postgres/NNNN_description.sql`) in order,
/// each in its own transaction, and records them in `schema_migrations (version, name,
/// checksum, applied_at)`. The same rules as the SQLite migrator: forward-only, a migration
/// whose SQL changed after it was applied (FNV-1a 64 checksum) or a database migrated by a
/// newer binary is refused and nothing is changed.
///
/// Several hosts starting at once apply each migration exactly once: each migration's
/// transaction takes a transaction-level advisory lock (`pg_advisory_xact_lock`, "Advisory
/// Locks" in the PostgreSQL manual's explicit-locking chapter) and re-reads what is applied
/// under it; the others wait for the lock and then find nothing left to do. Up-to-date
/// databases take no lock.
public struct PostgresMigrator: Sendable {
    public var migrations: [Migration]

    public init(migrations: [Migration]) {
        self.migrations = migrations.sorted { $0.version < $1.version }
    }

    /// The migrations embedded in the binary.
    public static func bundled() throws -> PostgresMigrator {
        PostgresMigrator(migrations: try BundledPostgresMigrations.all.map { try Migration(name: $0.fileName, sql: $0.sql) })
    }

    public var latestVersion: Int { migrations.last?.version ?? 0 }

    /// The advisory lock key all migrators of this program share ("trafficincidents migrate").
    static let lockKey: Int64 = {
        var h = FNV1a64()
        h.combine("trafficincidents migrate".utf8)
        return h.signed
    }()

    /// Applies every pending migration; returns those this call applied.
    ///
    /// Each in a transaction of its own that first takes the migration lock
    /// (`pg_advisory_xact_lock`, held until the transaction ends: a pooler in transaction mode
    /// keeps it with the transaction, where a session lock would stay on a pooled server
    /// connection or be released on another) and re-reads what is applied under it. No limit
    /// on statements or lock waits (a migration may build an index on a large table while
    /// other hosts wait for it); an idle one ends as ``PostgresTimeouts/standard`` says.
    func migrate(_ connection: Connection, now: UTCInstant) throws -> [Migration] {
        guard try !pending(in: try recorded(connection)).isEmpty else { return [] }
        let limits = PostgresTimeouts(statementSeconds: 0, lockSeconds: 0,
                                      idleInTransactionSeconds: PostgresTimeouts.standard.idleInTransactionSeconds)
        var applied: [Migration] = []
        while true {
            let next = try connection.transaction(context: "applying migrations", timeouts: limits) { () throws -> Migration? in
                try connection.query("SELECT pg_advisory_xact_lock(:key)", named: ["key": .integer(Self.lockKey)], context: "waiting for the migration lock")
                try connection.execute("""
                    CREATE TABLE IF NOT EXISTS schema_migrations (
                        version integer PRIMARY KEY, name text NOT NULL, checksum text NOT NULL, applied_at timestamptz NOT NULL)
                    """, context: "creating schema_migrations")
                // Another host may have applied some while this one waited for the lock.
                guard let migration = try pending(in: try recorded(connection)).first else { return nil }
                try connection.execute(migration.sql, context: "applying migration \(migration.name)")
                try connection.query("INSERT INTO schema_migrations (version, name, checksum, applied_at) VALUES (:version, :name, :checksum, :applied_at)",
                                     named: ["version": .integer(Int64(migration.version)), "name": .text(migration.name),
                                             "checksum": .text(migration.checksum), "applied_at": .instant(now)],
                                     context: "recording migration \(migration.name)")
                return migration
            }
            guard let next else { return applied }
            applied.append(next)
        }
    }

    /// Checks, without writing, that the database is exactly at this binary's schema.
    /// - Throws: ``MigrationError``.
    func verifyUpToDate(_ connection: Connection) throws {
        let pending = try pending(in: try recorded(connection))
        if !pending.isEmpty { throw MigrationError.pending(names: pending.map(\.name)) }
    }

    /// Every known migration and when it was applied (nil: pending).
    func status(_ connection: Connection) throws -> [(migration: Migration, appliedAt: UTCInstant?)] {
        let recorded = try recorded(connection)
        _ = try pending(in: recorded)
        return migrations.map { ($0, recorded[$0.version]?.appliedAt) }
    }

    private struct Recorded { var checksum: String; var appliedAt: UTCInstant? }

    private func recorded(_ connection: Connection) throws -> [Int: Recorded] {
        // Both statements in one transaction: two round trips fewer than one each (of the
        // fourteen a PostgreSQL query's process made after connecting, session 13).
        if !connection.inTransaction { return try connection.transaction(context: "reading schema_migrations") { try self.recorded(connection) } }
        let exists = try connection.query("SELECT to_regclass('schema_migrations') IS NOT NULL", context: "reading schema_migrations")
        guard exists.bool(0, 0) == true else { return [:] }
        let rows = try connection.query("SELECT version, checksum, applied_at FROM schema_migrations", context: "reading schema_migrations")
        var recorded: [Int: Recorded] = [:]
        for row in 0..<rows.rowCount {
            recorded[rows.int(row, 0) ?? 0] = Recorded(checksum: rows.string(row, 1) ?? "", appliedAt: rows.instant(row, 2))
        }
        return recorded
    }

    /// The migrations not yet applied, after checking the applied ones.
    private func pending(in recorded: [Int: Recorded]) throws -> [Migration] {
        if let newest = recorded.keys.max(), newest > latestVersion {
            throw MigrationError.newerSchema(databaseVersion: newest, knownVersion: latestVersion)
        }
        for migration in migrations {
            if let row = recorded[migration.version], row.checksum != migration.checksum {
                throw MigrationError.checksumMismatch(name: migration.name, recorded: row.checksum, current: migration.checksum)
            }
        }
        return migrations.filter { recorded[$0.version] == nil }
    }
}

