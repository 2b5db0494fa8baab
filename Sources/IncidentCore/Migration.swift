/// One schema change of either store: `NNNN_description.sql` (`Migrations/` for SQLite,
/// `Migrations/postgres/` for PostgreSQL), applied in `NNNN` order, forward-only.
public struct Migration: Sendable, Equatable {
    /// `NNNN`, the order of application.
    public var version: Int
    /// The file name, e.g. `0001_incidents.sql`.
    public var name: String
    public var sql: String
    /// FNV-1a 64 of the SQL text, recorded when applied: detects an edited migration.
    /// (Over the contiguous UTF-8 bytes: every query verifies all of them at its start, and
    /// iterating the `utf8` view took 31 instructions a byte.)
    public var checksum: String {
        var h = FNV1a64()
        var text = sql
        text.withUTF8 { h.combine($0) }
        return h.hex
    }

    /// - Throws: ``MigrationError/badName(_:)`` unless `name` is `NNNN_….sql`.
    public init(name: String, sql: String) throws {
        guard let version = Int(name.prefix(while: \.isNumber)), name.hasSuffix(".sql") else {
            throw MigrationError.badName(name)
        }
        self.version = version
        self.name = name
        self.sql = sql
    }
}

/// Why a store's schema cannot be brought up to date (both stores' migrators). Each case
/// states the facts; the commands add which command to run about it.
public enum MigrationError: Error, Equatable, Sendable, CustomStringConvertible {
    case badName(String)
    /// A migration already applied to this database has different SQL now.
    case checksumMismatch(name: String, recorded: String, current: String)
    /// The database was migrated by a newer binary.
    case newerSchema(databaseVersion: Int, knownVersion: Int)
    /// The database needs migrations that this (read-only) open may not apply.
    case pending(names: [String])

    public var description: String {
        switch self {
        case .badName(let name):
            "migration file \(name) is not named NNNN_description.sql"
        case let .checksumMismatch(name, recorded, current):
            "migration \(name) was changed after it was applied to this database (recorded checksum \(recorded), now \(current)); "
                + "migrations are forward-only: restore the original file and add a new migration instead"
        case let .newerSchema(databaseVersion, knownVersion):
            "the database schema is version \(databaseVersion), newer than this binary knows (\(knownVersion)); it was not modified"
        case .pending(let names):
            "the database needs migrations \(names.joined(separator: ", ")) before it can be read"
        }
    }
}
