import Foundation
import IncidentCore
#if canImport(Glibc)
import Glibc
#endif

/// An advisory lock (`flock(2)`) on a file beside the database. The kernel releases it when
/// the process exits, however it exits (even `kill -9`), so a crash never leaves a stale lock.
final class FileLock: HeldLock, @unchecked Sendable {  // the descriptor is closed once, under `state`
    private let state: Locked<Int32?>
    let path: String

    /// Takes the lock on `path` (created if missing): exclusive or shared, without waiting.
    /// - Returns: nil when another process holds it (exclusively, or at all for `exclusive`).
    /// - Throws: ``FileLockError`` when the file cannot be opened or created.
    init?(path: String, exclusive: Bool = true, writeHolder: Bool = true) throws {
        guard let fd = try Self.take(path, exclusive: exclusive, writeHolder: writeHolder) else { return nil }
        self.path = path
        self.state = Locked(fd)
    }

    /// Opens (creating) and locks `path`: its descriptor, or nil when another process holds it.
    private static func take(_ path: String, exclusive: Bool, writeHolder: Bool) throws -> Int32? {
        var fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        if fd < 0 && !exclusive { fd = open(path, O_RDONLY | O_CLOEXEC) }
        guard fd >= 0 else {
            throw FileLockError(path: path, reason: String(cString: strerror(errno)))
        }
        guard flock(fd, (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB) == 0 else {
            close(fd)
            return nil
        }
        if exclusive && writeHolder {
            // Record the holder for the operator reading the file (informational only).
            _ = ftruncate(fd, 0)
            let text = "pid \(getpid())\n"
            _ = text.withCString { write(fd, $0, strlen($0)) }
        }
        return fd
    }

    /// Whether the path still names the locked file (device and inode of the path against the
    /// descriptor's). A lock file deleted or replaced under this process no longer keeps
    /// another process out, so the file at the path now is locked in its place when it is
    /// free (``HeldLockState/retaken``); when another process holds it, this process has lost
    /// the lock (``HeldLockState/lost(holder:)``) and keeps its old, useless one.
    func verify() -> HeldLockState {
        state.withLock { fd in
            guard let descriptor = fd else { return .lost(holder: nil) }
            if let held = FileIdentity(descriptor: descriptor), FileIdentity(path: path) == held { return .held }
            guard let taken = try? Self.take(path, exclusive: true, writeHolder: true) else {
                let holder = (try? String(contentsOfFile: path, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
                return .lost(holder: holder?.isEmpty == false ? holder : nil)
            }
            flock(descriptor, LOCK_UN)
            close(descriptor)
            fd = taken
            return .retaken
        }
    }

    func isInPlace() -> Bool {
        state.withLock { fd in
            guard let descriptor = fd, let held = FileIdentity(descriptor: descriptor) else { return false }
            return FileIdentity(path: path) == held
        }
    }

    func release() {
        state.withLock { fd in
            guard let descriptor = fd else { return }
            flock(descriptor, LOCK_UN)
            close(descriptor)
            fd = nil
        }
    }

    deinit { release() }
}

/// A lock file cannot be created or opened: names the file and the reason.
public struct FileLockError: Error, Equatable, Sendable, CustomStringConvertible {
    public var path: String
    public var reason: String
    public var description: String { "cannot create the lock file \(path): \(reason)" }
}

/// A value behind a mutex (Synchronization.Mutex is not copyable into a class field here).
final class Locked<Value>: @unchecked Sendable {
    private var value: Value
    private let lock = NSLock()
    init(_ value: Value) { self.value = value }
    func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}

/// Scheduling locks of a database file: `<database>.<name>.lock` files, e.g. the one every
/// `incident-scheduler` that writes takes (`scheduler`).
public struct SQLiteSchedulingLocks: SchedulingLocks {
    public let databasePath: String

    public init(databasePath: String) {
        self.databasePath = databasePath
    }

    func path(of name: String) -> String {
        name == "scheduler" ? databasePath + ".lock" : "\(databasePath).\(name).lock"
    }

    public func tryLock(_ name: String) throws -> (any HeldLock)? {
        try FileLock(path: path(of: name))
    }

    public func holder(of name: String) -> String? {
        (try? String(contentsOfFile: path(of: name), encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// Migrations take an exclusive lock on `<database>.migrating` while they apply; a reader
/// that finds migrations pending waits for it, so `incidents` started while a first
/// migration is under way waits like any other statement instead of failing.
enum MigrationLock {
    static func path(_ database: String) -> String { database + ".migrating" }

    /// Runs `body` (which applies migrations) holding the lock, waiting for another process
    /// that holds it (migrations are short). Without a lock file (a read-only directory),
    /// runs `body` unguarded: SQLite's own locks still serialize writers.
    static func whileMigrating<T>(_ database: String, _ body: () throws -> T) throws -> T {
        guard database != ":memory:" else { return try body() }
        let fd = open(path(database), O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return try body() }
        defer { close(fd) }  // releases the lock
        _ = flock(fd, LOCK_EX)
        return try body()
    }

    /// Runs `check` (which throws ``MigrationError/pending(names:)`` while migrations are
    /// missing); while it does and another process holds the migration lock, waits and
    /// checks again, up to `seconds`.
    static func waitWhileMigrating(_ database: String, seconds: Double, _ check: () throws -> Void) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            do {
                return try check()
            } catch let error as MigrationError {
                guard case .pending = error, database != ":memory:", Date() < deadline,
                      FileManager.default.fileExists(atPath: path(database)) else { throw error }
                // A shared lock is refused only while a migration holds it exclusively.
                if let idle = try? FileLock(path: path(database), exclusive: false) {
                    idle.release()
                    throw error
                }
                usleep(50_000)
            } catch let error as SQLiteError where error.code.primary == .error && Date() < deadline
                && FileManager.default.fileExists(atPath: path(database)) {
                // A schema changed under a half-created database: wait for the migration.
                if let idle = try? FileLock(path: path(database), exclusive: false) {
                    idle.release()
                    throw error
                }
                usleep(50_000)
            }
        }
    }
}
