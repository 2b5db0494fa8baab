import Foundation
import IncidentCore
@testable import IncidentSQLite
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// glibc's setfsuid(2): the user the calling thread's file accesses are checked as (Linux; the
/// thread's other credentials are untouched). Not in Swift's Glibc module.
@_silgen_name("setfsuid") private func setfsuid(_ uid: UInt32) -> Int32

@Suite("The WAL does not outlive the work; read-only users can still query (issue 13.5)")
struct WALTests {
    static func size(_ path: String) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int
    }

    static func database() throws -> (directory: URL, path: String) {
        let directory = try TestPaths.temporaryDirectory("wal")
        return (directory, directory.appendingPathComponent("incidents.sqlite").path)
    }

    static func poll(_ store: SQLiteStore, at time: UTCInstant, _ description: String, count: Int = 3000) throws {
        _ = try store.ingest(PollContext(source: "gits", startedAt: time),
                             ListProducer(incidents: (0..<count).map { incident("\($0)", description: "\(description) \($0)") }).callAsFunction)
    }

    /// A database of `count` incidents written by one poll, its store closed.
    static func written(_ description: String, count: Int) throws -> (directory: URL, path: String) {
        let (directory, path) = try database()
        try poll(try SQLiteStore(path: path, clock: .fixed(t0)), at: t0, description, count: count)
        return (directory, path)
    }

    @Test("after each poll the -wal is empty, even while a reader held an older snapshot during the poll",
          .timeLimit(.minutes(1)))
    func truncatedAfterEachPoll() throws {
        let (_, path) = try Self.database()
        // A checkpoint that waited for the reader would wait this long: the time limit would fail the test.
        let store = try SQLiteStore(path: path, clock: .fixed(t0), busyTimeout: 3600)
        try Self.poll(store, at: t0, "first")
        #expect(Self.size(path + "-wal") == 0)
        #expect(Self.size(path + "-shm") != nil)
        #expect(Self.size(path)! > 1_000_000)

        let reader = try Database(path: path, mode: .readOnly)
        try reader.execute("BEGIN")
        #expect(try reader.scalarInt("SELECT count(*) FROM incidents") == 3000)
        try Self.poll(store, at: t1, "second")  // changes every row: the log holds them
        let held = try #require(Self.size(path + "-wal"))
        #expect(held > 1_000_000)
        #expect(try reader.scalarInt("SELECT count(*) FROM incidents WHERE description LIKE 'first%'") == 3000)
        reader.rollbackQuietly()

        try Self.poll(store, at: t2, "second", count: 1)
        #expect(Self.size(path + "-wal") == 0)
        #expect(try allRows(store).filter { $0.incident.description?.hasPrefix("second") == true }.count == 3000)
    }

    @Test("the -wal and -shm stay, empty, when the last connection closes")
    func keptWhenClosed() throws {
        let (_, path) = try Self.written("first", count: 10)
        #expect(Self.size(path + "-wal") == 0)
        #expect(Self.size(path + "-shm") != nil)
    }

    /// Runs `body` as a user who may read the database but not write its directory: as root,
    /// with the thread's file accesses checked as `nobody`; otherwise with the directory made
    /// read-only. Checks first that the directory really is not writable.
    static func asReadOnlyUser<T>(_ directory: URL, _ body: () throws -> T) throws -> T {
        let root = getuid() == 0
        if root {
            _ = setfsuid(65534)
        } else {
            try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: directory.path)
        }
        defer {
            if root { _ = setfsuid(0) } else {
                try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory.path)
            }
        }
        let probe = directory.appendingPathComponent("probe").path
        let descriptor = open(probe, O_WRONLY | O_CREAT, 0o644)
        if descriptor >= 0 { close(descriptor); unlink(probe) }
        try #require(descriptor < 0 && errno == EACCES, "the directory is still writable")
        return try body()
    }

    @Test("a user who may read the database but not write its directory lists, searches and counts")
    func readOnlyUser() throws {
        let (directory, path) = try Self.written("[사고] 잠실대교", count: 50)
        let (count, found, total) = try Self.asReadOnlyUser(directory) { () throws -> (Int, Int, Int) in
            let reader = try SQLiteStore(readingFrom: path, clock: .fixed(t1))
            var search = IncidentQuery(now: t1)
            search.search = "잠실대교 7"
            search.near = Coordinate(latitude: 37.27, longitude: 127.05)
            return (try reader.incidents(matching: IncidentQuery(now: t1)).count, try reader.incidents(matching: search).count,
                    try reader.statistics(matching: IncidentQuery(now: t1), utcOffsetSeconds: 0).total)
        }
        #expect(count == 50)
        #expect(found == 5)  // 7, 17, 27, 37, 47
        #expect(total == 50)
    }

    @Test("without the kept -wal and -shm, that user could not open it: why they are kept")
    func whyKept() throws {
        let (directory, path) = try Self.written("x", count: 5)
        try FileManager.default.removeItem(atPath: path + "-wal")
        try FileManager.default.removeItem(atPath: path + "-shm")
        try Self.asReadOnlyUser(directory) {
            #expect { _ = try SQLiteStore(readingFrom: path, clock: .fixed(t1)).incidents(matching: IncidentQuery(now: t1)) } throws: { error in
                error is SQLiteError
            }
        }
    }
}
