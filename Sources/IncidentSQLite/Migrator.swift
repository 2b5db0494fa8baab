import IncidentCore
import IncidentMigrations

/// Applies the bundled migrations in order, each in its own `BEGIN IMMEDIATE` transaction,
/// and records them in `schema_migrations (version, name, checksum, applied_at)`.
///
/// Safe when several processes open a new database at once: the write lock serializes them and
/// each re-reads what is applied inside its transaction. Shaped after GRDB's `DatabaseMigrator`.
public struct Migrator: Sendable {
    public var migrations: [Migration]

    /// The migrations embedded in the binary.
    public static func bundled() throws -> Migrator {
        try Migrator(migrations: BundledMigrations.all.map { try Migration(name: $0.fileName, sql: $0.sql) })
    }

    public init(migrations: [Migration]) {
        self.migrations = migrations.sorted { $0.version < $1.version }
    }

    /// The highest version this binary knows.
    public var latestVersion: Int { migrations.last?.version ?? 0 }

    /// A migration and when it was applied to a given database (nil: pending).
    public struct Status: Sendable, Equatable {
        public var migration: Migration
        public var appliedAt: String?
    }

    /// Applies every pending migration.
    /// - Parameter now: the `applied_at` time to record.
    /// - Returns: the migrations applied by this call (empty when up to date).
    /// - Throws: ``MigrationError`` (edited or newer schema: nothing is changed), ``SQLiteError``.
    @discardableResult
    public func migrate(_ db: Database, now: UTCInstant) throws -> [Migration] {
        // The common case (every open of an up-to-date database) reads only: no write lock.
        let recorded = try recordedMigrations(db)
        try verify(recorded)
        guard migrations.contains(where: { recorded[$0.version] == nil }) else { return [] }
        try db.execute("""
            CREATE TABLE IF NOT EXISTS schema_migrations (
                version INTEGER PRIMARY KEY, name TEXT NOT NULL, checksum TEXT NOT NULL, applied_at TEXT NOT NULL)
            """)
        var applied: [Migration] = []
        for migration in migrations {
            let didApply = try db.writeTransaction { () throws -> Bool in
                let recorded = try recordedMigrations(db)
                try verify(recorded)
                guard recorded[migration.version] == nil else { return false }
                try db.execute(migration.sql)
                try db.run("""
                    INSERT INTO schema_migrations (version, name, checksum, applied_at)
                    VALUES (:version, :name, :checksum, :applied_at)
                    """, ["version": .integer(Int64(migration.version)), "name": .text(migration.name),
                          "checksum": .text(migration.checksum), "applied_at": .text(now.rfc3339)])
                return true
            }
            if didApply { applied.append(migration) }
        }
        return applied
    }

    /// Checks, without writing, that the database is exactly at this binary's schema.
    /// - Throws: ``MigrationError/pending(names:)``, ``MigrationError/newerSchema(databaseVersion:knownVersion:)``,
    ///   ``MigrationError/checksumMismatch(name:recorded:current:)``.
    public func verifyUpToDate(_ db: Database) throws {
        let recorded = try recordedMigrations(db)
        try verify(recorded)
        let pending = migrations.filter { recorded[$0.version] == nil }.map(\.name)
        if !pending.isEmpty { throw MigrationError.pending(names: pending) }
    }

    /// Checks, without writing, that this binary may open `db` at all: its schema is not newer
    /// and no applied migration was edited (pending migrations are fine: they can be applied).
    /// - Throws: ``MigrationError/newerSchema(databaseVersion:knownVersion:)``,
    ///   ``MigrationError/checksumMismatch(name:recorded:current:)``, ``SQLiteError`` (not a database).
    public func verifyAccepted(_ db: Database) throws {
        try verify(try recordedMigrations(db))
    }

    /// Every known migration with its application time in `db`.
    public func status(_ db: Database) throws -> [Status] {
        let recorded = try recordedMigrations(db)
        try verify(recorded)
        return migrations.map { Status(migration: $0, appliedAt: recorded[$0.version]?.appliedAt) }
    }

    private struct Recorded { var name: String; var checksum: String; var appliedAt: String }

    private func recordedMigrations(_ db: Database) throws -> [Int: Recorded] {
        guard try db.scalarInt("SELECT count(*) FROM sqlite_master WHERE name = 'schema_migrations'") == 1 else {
            return [:]
        }
        var rows: [Int: Recorded] = [:]
        try db.query("SELECT version, name, checksum, applied_at FROM schema_migrations") { row in
            rows[row.int(at: 0) ?? 0] = Recorded(name: row.string(at: 1) ?? "", checksum: row.string(at: 2) ?? "",
                                                 appliedAt: row.string(at: 3) ?? "")
        }
        return rows
    }

    private func verify(_ recorded: [Int: Recorded]) throws {
        if let newest = recorded.keys.max(), newest > latestVersion {
            throw MigrationError.newerSchema(databaseVersion: newest, knownVersion: latestVersion)
        }
        for migration in migrations {
            if let row = recorded[migration.version], row.checksum != migration.checksum {
                throw MigrationError.checksumMismatch(name: migration.name, recorded: row.checksum,
                                                      current: migration.checksum)
            }
        }
    }
}
