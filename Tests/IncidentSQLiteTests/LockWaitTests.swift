import Foundation
import IncidentCore
@testable import IncidentSQLite
import TestSupport
import Testing

/// Issue 12, point 12: opening a database waits for another connection's lock, like every
/// other statement, instead of failing at once.
@Suite("Opening waits for locks")
struct LockWaitTests {
    static let now = UTCInstant(rfc3339: "2024-01-01T00:00:00Z")!

    /// Runs `body` on its own thread; the result arrives through the returned box.
    final class Background<T: Sendable>: @unchecked Sendable {
        private let done = DispatchSemaphore(value: 0)
        private var value: Result<T, any Error>?
        init(_ body: @escaping @Sendable () throws -> T) {
            Thread {
                self.value = Result { try body() }
                self.done.signal()
            }.start()
        }
        /// The result, or nil when it is not there within `seconds`.
        func result(within seconds: Double) -> Result<T, any Error>? {
            done.wait(timeout: .now() + seconds) == .success ? value : nil
        }
    }

    @Test("switching a new database to WAL waits while another connection holds an exclusive lock")
    func walSwitchWaits() throws {
        let path = try TestPaths.temporaryDirectory("lockwait").appendingPathComponent("new.sqlite").path
        let holder = try Database(path: path, mode: .readWriteCreate, busyTimeout: 0)
        try holder.execute("PRAGMA journal_mode = DELETE; CREATE TABLE t (x); BEGIN EXCLUSIVE; INSERT INTO t VALUES (1)")
        let opening = Background { _ = try SQLiteStore(path: path, clock: .fixed(Self.now), busyTimeout: 30) }
        #expect(opening.result(within: 0.5) == nil, "the open must wait for the lock, not fail at once")
        try holder.execute("COMMIT")
        let outcome = try #require(opening.result(within: 60))
        #expect(throws: Never.self) { try outcome.get() }
        #expect(try Database(path: path, mode: .readOnly).scalarInt("SELECT count(*) FROM schema_migrations") == Int64(try Migrator.bundled().migrations.count))
    }

    @Test("a reader that finds migrations pending while another process migrates waits, then reads")
    func readerWaitsForMigration() throws {
        let path = try TestPaths.temporaryDirectory("lockwait").appendingPathComponent("migrating.sqlite").path
        // Another process is creating the database: it holds the migration lock, the file exists
        // and no migration is recorded yet.
        let lock = try #require(try FileLock(path: MigrationLock.path(path), writeHolder: false))
        let db = try Database(path: path, mode: .readWriteCreate)
        // A generous wait: the whole unit pass runs beside this test on two cores.
        let reading = Background { _ = try SQLiteStore(readingFrom: path, clock: .fixed(Self.now), busyTimeout: 90) }
        #expect(reading.result(within: 0.5) == nil, "the reader must wait for the migration, not fail")
        let migrating = ContinuousClock.now
        _ = try Migrator.bundled().migrate(db, now: Self.now)
        lock.release()
        let outcome = try #require(reading.result(within: 120), "migrating took \(ContinuousClock.now - migrating)")
        #expect(throws: Never.self) { try outcome.get() }
    }

    @Test("without a migration under way, pending migrations are reported at once")
    func pendingWithoutMigration() throws {
        let path = try TestPaths.temporaryDirectory("lockwait").appendingPathComponent("old.sqlite").path
        _ = try Database(path: path, mode: .readWriteCreate)
        let start = ContinuousClock.now
        #expect(throws: MigrationError.self) { _ = try SQLiteStore(readingFrom: path, clock: .fixed(Self.now), busyTimeout: 30) }
        #expect(ContinuousClock.now - start < .seconds(20))
    }
}
