import Foundation
@testable import IncidentApp
import IncidentCore
import IncidentSQLite
import Testing
import TestSupport

/// ``StoreFileWatch`` decides, before each poll, whether the database file is still this
/// scheduler's. The race the end-to-end test "the database and its lock file deleted and a
/// second loop started" met now and then: the second scheduler had made its database file but
/// not yet locked its lock file when the first one looked; the first re-locked the new lock file
/// and took the new database for a backup put back in place, and polled once more into it.
@Suite("The database file under a scheduler: both files replaced is not a restored backup")
struct StoreFileWatchTests {
    static func watch(_ directory: URL) throws -> (watch: StoreFileWatch, path: String, lock: any HeldLock) {
        let path = directory.appendingPathComponent("incidents.sqlite").path
        let store = try SQLiteStore(path: path, clock: .fixed(UTCInstant(secondsSince1970: 1_700_000_000)))
        let lock = try #require(try SQLiteSchedulingLocks(databasePath: path).tryLock("scheduler"))
        let logger = Logger(clock: .fixed(UTCInstant(secondsSince1970: 1_700_000_000)))
        return (StoreFileWatch(database: path, store: store, lock: lock, logger: logger), path, lock)
    }

    @Test("database and lock file deleted, a new database made at the path, its lock file not yet taken: no poll")
    func bothReplaced() throws {
        let directory = try TestPaths.temporaryDirectory("file-watch")
        let (watch, path, lock) = try Self.watch(directory)
        #expect(watch.allowsPoll())
        for file in [path, path + ".lock"] { try FileManager.default.removeItem(atPath: file) }
        _ = try SQLiteStore(path: path, clock: .fixed(UTCInstant(secondsSince1970: 1_700_000_100)))  // the second scheduler's file
        FileManager.default.createFile(atPath: path + ".lock", contents: Data())                   // its lock file, not yet locked
        #expect(!watch.allowsPoll())
        #expect(watch.lost == .deleted(database: path))
        // The first scheduler did not take the new lock file: the second one can.
        #expect(try SQLiteSchedulingLocks(databasePath: path).tryLock("scheduler") != nil)
        lock.release()
    }

    @Test("only the database replaced (a backup put back, its lock file in place): reopened, polls go on")
    func backupPutBack() throws {
        let directory = try TestPaths.temporaryDirectory("file-watch")
        let (watch, path, lock) = try Self.watch(directory)
        let backup = path + ".backup"
        _ = try SQLiteStore(path: backup, clock: .fixed(UTCInstant(secondsSince1970: 1_700_000_100)))
        #expect(rename(backup, path) == 0, "mv backup over the database")
        #expect(watch.allowsPoll())
        #expect(watch.lost == nil)
        lock.release()
    }
}
