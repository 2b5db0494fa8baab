import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// An exclusive advisory lock (`flock(2)`) on `<database>.lock`, held by one
/// `incident-scheduler` at a time per database, so overlapping cron runs never poll twice.
///
/// The kernel releases it when the process exits, however it exits (even `kill -9`), so a
/// crash never leaves a stale lock behind.
public final class ProcessLock {
    private let descriptor: Int32
    public let path: String

    /// Takes the lock without waiting.
    /// - Returns: nil when another process holds it.
    /// - Throws: when the lock file cannot be created (e.g. a read-only directory).
    public init?(path: String) throws {
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            throw FileAccessError("cannot create the lock file \(path): \(String(cString: strerror(errno))); check the directory's permissions")
        }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            close(fd)
            return nil
        }
        self.descriptor = fd
        self.path = path
        // Record the holder for the operator reading the file (informational only).
        _ = ftruncate(fd, 0)
        let text = "\(getpid())\n"
        _ = text.withCString { write(fd, $0, strlen($0)) }
    }

    deinit {
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }

    /// The pid written by the holder, when readable.
    public static func holder(of path: String) -> String? {
        (try? String(contentsOfFile: path, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// A file this program needs (the lock file, the metrics file) cannot be created or written:
/// names the file, the reason, and what to check.
public struct FileAccessError: Error, Equatable, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
