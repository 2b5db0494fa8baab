import Foundation
import IncidentCore
import IncidentSQLite

/// The composition root for storage: turns the configured `database` value into the store
/// ports. The only place in IncidentApp that names a store implementation.
enum Stores {
    /// Everything a scheduler command needs from its store.
    typealias Writable = any IngestStore & IncidentReader & StoreAdministration

    /// Opens (creating and migrating when needed) the store for writing.
    /// - Throws: the store's errors (cannot open, not a database, migration failures).
    static func openForWriting(_ database: String, clock: UTCClock) throws -> Writable {
        try SQLiteStore(path: database, clock: clock)
    }

    /// Opens an existing store for queries only; never creates or migrates it.
    /// - Throws: ``StoreMissing`` when there is no database; the store's errors otherwise.
    static func openForReading(_ database: String, clock: UTCClock) throws -> any IncidentReader {
        do {
            return try SQLiteStore(readingFrom: database, clock: clock)
        } catch StoreOpenError.missing(let path) {
            throw StoreMissing(database: path)
        }
    }

    /// Opens the store for schema administration (`migrate`, `migrate --status`) without
    /// applying or requiring migrations; `create` makes the database when missing.
    static func openForInspection(_ database: String, clock: UTCClock, create: Bool = false) throws -> any StoreAdministration {
        try SQLiteStore(inspecting: database, clock: clock, create: create)
    }

    /// The locks that keep schedulers sharing `database` from polling the same source at once.
    static func schedulingLocks(_ database: String) -> any SchedulingLocks {
        SQLiteSchedulingLocks(databasePath: database)
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
        switch error as? MigrationError {
        case .pending: .migrationsPending
        case .newerSchema: .newerSchema
        default: nil
        }
    }
}

/// The database does not exist yet (exit 66).
struct StoreMissing: Error, CustomStringConvertible {
    var database: String
    var description: String {
        "no incidents database at \(database); run `incident-scheduler run --once` (or `ingest`) first, or pass --database PATH"
    }
}
