import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Response bodies on disk: names that tell their owner, and removal of what dead processes
/// left behind.
///
/// A body file is named `incident-http-pid<PID>-<UUID>.body` (PID of the writing process) and
/// is held under an exclusive `flock(2)` for as long as its owner has it open: while it is being
/// written and while the caller of `HTTPClient.withResponse` reads it. The owner removes it
/// when the call ends; a process killed with SIGKILL cannot, and its file (one was 59 MB)
/// would stay forever. `removeLeftovers(in:)` removes such files; every `RetryingHTTPClient`
/// calls it for its temporary directory when it is created.
public enum TemporaryBodies {
    static let prefix = "incident-http-pid"
    static let suffix = ".body"

    /// Removes the body files in `directory` whose owner is dead, and returns their URLs.
    ///
    /// A file is removed only when both say its owner is gone: no process has the PID in its
    /// name (`kill(pid, 0)` fails with `ESRCH`), and nobody holds its lock (a non-blocking
    /// `flock` succeeds; it is held while the file is removed). The lock keeps a live owner's
    /// file even where its PID means nothing here (another PID namespace sharing the
    /// directory); a PID reused by an unrelated live process only delays the removal. Files
    /// not named as above (other programs', or bodies of versions without a PID in the name)
    /// and anything that is not a regular file are never touched. Errors (an unreadable
    /// directory, a file removed meanwhile) are skipped silently: this is housekeeping.
    @discardableResult
    public static func removeLeftovers(in directory: URL) -> [URL] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        var removed: [URL] = []
        for name in names.sorted() {
            guard let pid = ownerPID(ofFileNamed: name), !isAlive(pid) else { continue }
            let url = directory.appendingPathComponent(name)
            let fd = open(url.path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
            guard fd >= 0 else { continue }
            defer { close(fd) }
            var info = stat()
            guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { continue }
            guard flock(fd, LOCK_EX | LOCK_NB) == 0 else { continue }
            if unlink(url.path) == 0 { removed.append(url) }
        }
        return removed
    }

    /// A new name for a body file of this process in `directory`, for a caller that keeps a
    /// body beyond `HTTPClient.withResponse` (several pages read in one transaction): moved
    /// there, it is removed by ``removeLeftovers(in:)`` if this process dies before it does.
    public static func fileURL(in directory: URL) -> URL {
        directory.appendingPathComponent("\(prefix)\(getpid())-\(UUID().uuidString)\(suffix)")
    }

    /// The owner's PID in a body file's name, or nil for any other name.
    static func ownerPID(ofFileNamed name: String) -> pid_t? {
        guard name.hasPrefix(prefix), name.hasSuffix(suffix) else { return nil }
        let rest = name.dropFirst(prefix.count).dropLast(suffix.count)
        guard let dash = rest.firstIndex(of: "-"), rest.index(after: dash) < rest.endIndex else { return nil }
        let digits = rest[..<dash]
        guard !digits.isEmpty, digits.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
              let pid = pid_t(digits), pid > 0 else { return nil }
        return pid
    }

    /// Whether a process with this PID exists (it may belong to another user: `EPERM`).
    static func isAlive(_ pid: pid_t) -> Bool {
        kill(pid, 0) == 0 || errno == EPERM
    }

    /// A new body file of this process in `directory`: created exclusively (mode 0600), then locked.
    ///
    /// - Throws: `CocoaError` naming the file when it cannot be created or locked.
    static func create(in directory: URL) throws -> TemporaryBody {
        let url = fileURL(in: directory)
        let fd = open(url.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path,
                                                           NSLocalizedDescriptionKey: String(cString: strerror(errno))])
        }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let message = String(cString: strerror(errno))
            unlink(url.path)
            close(fd)
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path, NSLocalizedDescriptionKey: message])
        }
        return TemporaryBody(url: url, handle: FileHandle(fileDescriptor: fd, closeOnDealloc: true))
    }
}

/// One body file, owned by this process: locked while this object has it open, removed by
/// `remove()` or, at the latest, when the object goes away. Thread-safe.
final class TemporaryBody: Sendable {
    let url: URL
    private let handle: Locked<FileHandle?>

    fileprivate init(url: URL, handle: FileHandle) {
        self.url = url
        self.handle = Locked(handle)
    }

    deinit {
        remove()
    }

    /// Appends bytes. - Throws: the write error; `CocoaError` if the file was already removed.
    func write(_ data: Data) throws {
        try handle.withLock { handle in
            guard let handle else { throw CocoaError(.fileNoSuchFile) }
            try handle.write(contentsOf: data)
        }
    }

    /// Empties the file (a second response of the same attempt starts over).
    func truncate() throws {
        try handle.withLock { handle in
            guard let handle else { throw CocoaError(.fileNoSuchFile) }
            try handle.truncate(atOffset: 0)
        }
    }

    /// Removes the file, then releases its lock (so nobody sees it unlocked). Idempotent.
    func remove() {
        handle.withLock { handle in
            guard let open = handle else { return }
            unlink(url.path)
            try? open.close()
            handle = nil
        }
    }
}
