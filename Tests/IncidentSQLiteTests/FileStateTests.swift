import Foundation
import IncidentCore
@testable import IncidentSQLite
import TestSupport
import Testing

/// Issue 24, point 5: whether a database path and its lock file still name the files a
/// process has open (the checks a scheduler makes before each poll).
@Suite("Database and lock files replaced or deleted under an open store")
struct FileStateTests {
    static let now = UTCInstant(rfc3339: "2024-01-01T00:00:00Z")!

    @Test("a replaced database is seen and reopened (the new file's rows, migrated); a deleted one is seen; :memory: never moves")
    func database() throws {
        let directory = try TestPaths.temporaryDirectory("filestate")
        let path = directory.appendingPathComponent("incidents.sqlite").path
        let store = try SQLiteStore(path: path, clock: .fixed(Self.now))
        #expect(store.fileState() == .same)
        // The replacement holds a table the store's file does not, and no schema yet.
        let replacement = directory.appendingPathComponent("backup.sqlite").path
        try Database(path: replacement).execute("CREATE TABLE marker (x); INSERT INTO marker VALUES (42)")
        #expect(rename(replacement, path) == 0)
        #expect(store.fileState() == .replaced)
        try store.reopen()
        #expect(store.fileState() == .same)
        #expect(try store.withDatabase { try $0.scalarInt("SELECT x FROM marker") } == 42)
        #expect(try store.migrationStates().allSatisfy { $0.appliedAt != nil }, "the reopened file is migrated")
        try FileManager.default.removeItem(atPath: path)
        #expect(store.fileState() == .deleted)
        #expect(try SQLiteStore(path: ":memory:", clock: .fixed(Self.now)).fileState() == .same)
    }

    @Test("the replaced file's log is never read into the new one: checkpointed, or, kept by a reader, unlinked; a log that came with the new file is kept")
    func replacedLog() throws {
        let directory = try TestPaths.temporaryDirectory("filestate")
        let path = directory.appendingPathComponent("incidents.sqlite").path
        let store = try SQLiteStore(path: path, clock: .fixed(Self.now), busyTimeout: 0.3)  // the reader never ends its transaction
        _ = try store.withDatabase { try $0.execute("CREATE TABLE pending (x); INSERT INTO pending VALUES (1)") }
        // A reader in a transaction on the old file keeps its log from being checkpointed.
        let reader = try Database(path: path, mode: .readOnly)
        try reader.execute("BEGIN; SELECT count(*) FROM pending")
        let replacement = directory.appendingPathComponent("backup.sqlite").path
        try Database(path: replacement).execute("CREATE TABLE marker (x); INSERT INTO marker VALUES (7)")
        #expect(rename(replacement, path) == 0)
        try store.reopen()
        #expect(try store.withDatabase { try $0.scalarInt("SELECT x FROM marker") } == 7)
        #expect(throws: SQLiteError.self) { try store.withDatabase { try $0.scalarInt("SELECT count(*) FROM pending") } }
        #expect(try reader.scalarInt("SELECT count(*) FROM pending") == 1, "the reader still reads the old file")

        // A backup moved in with its own -wal (frames not yet in the file): its log is read.
        let backup = directory.appendingPathComponent("other.sqlite").path
        let writer = try Database(path: backup)
        try writer.execute("CREATE TABLE other (x); INSERT INTO other VALUES (9)")
        for suffix in ["", "-wal"] { #expect(copyfile(backup + suffix, path + suffix)) }
        try store.reopen()
        #expect(try store.withDatabase { try $0.scalarInt("SELECT x FROM other") } == 9)
    }

    @Test("a lock file deleted: verify locks the new file; taken by another first: lost, naming the holder")
    func lock() throws {
        let database = try TestPaths.temporaryDirectory("filestate").appendingPathComponent("incidents.sqlite").path
        let locks = SQLiteSchedulingLocks(databasePath: database)
        let held = try #require(try locks.tryLock("scheduler"))
        #expect(held.verify() == .held)
        try FileManager.default.removeItem(atPath: database + ".lock")
        #expect(held.verify() == .retaken)
        #expect(try locks.tryLock("scheduler") == nil, "the retaken lock keeps others out")
        #expect(held.verify() == .held)
        try FileManager.default.removeItem(atPath: database + ".lock")
        // flock(2) locks open file descriptions: a second open in this process is another holder.
        let other = try #require(try locks.tryLock("scheduler"))
        #expect(held.verify() == .lost(holder: "pid \(getpid())"))
        other.release()
    }
}

/// Copies `from` to `to` by writing a new file and renaming it over `to` (as `mv` does).
private func copyfile(_ from: String, _ to: String) -> Bool {
    guard let data = FileManager.default.contents(atPath: from) else { return false }
    let temporary = to + ".tmp"
    return FileManager.default.createFile(atPath: temporary, contents: data) && rename(temporary, to) == 0
}
