import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The body file of a response that is still being downloaded: the transport appends to it,
/// readers follow it (``ResponseBodyReader``) and wait at its end until the download says
/// more came, that it is complete, or that it failed.
///
/// Why a file that is read while written, rather than chunks handed over in memory: the
/// download then never waits for the parser (a slow store, a lock wait, would otherwise stall
/// the socket past the idle timeout), memory stays bounded whatever the body's size (the
/// bytes wait in the page cache, spilled to disk only under memory pressure), and the body can
/// be read again from its start once complete, as a poll reads a document that turns out to
/// be older than the one stored (`ingestInTimeOrder`) or a page whose link is read after it.
///
/// Thread-safe: the transport writes from the session's delegate queue, a reader reads on the
/// parser's thread, the client ends it from the calling task or a timer.
final class BodySpool: @unchecked Sendable {  // all state under `condition`
    /// How the download ended.
    enum End: Sendable {
        case complete(bytes: Int64)
        case failed(AttemptFailure)
    }

    let url: URL
    /// When the response's headers arrived.
    private let started = ContinuousClock.now
    private let condition = NSCondition()
    private var written: Int64 = 0
    private var end: End?
    private var endTime: ContinuousClock.Instant?
    /// Stops the transfer (cancels its task) with this failure; set by the transport.
    private let stop: @Sendable (NetworkError.Code, String) -> Void

    init(url: URL, stop: @escaping @Sendable (NetworkError.Code, String) -> Void) {
        self.url = url
        self.stop = stop
    }

    /// The transport appended bytes: `total` are now in the file.
    func advance(to total: Int64) {
        condition.lock()
        if end == nil, total > written {
            written = total
            condition.broadcast()
        }
        condition.unlock()
    }

    /// The transport's last word; later ones are ignored.
    func finish(_ outcome: End) {
        condition.lock()
        if end == nil {
            if case .complete(let bytes) = outcome { written = bytes }
            end = outcome
            endTime = .now
            condition.broadcast()
        }
        condition.unlock()
    }

    /// How the download ended; nil while it goes on.
    var ending: End? {
        condition.lock()
        defer { condition.unlock() }
        return end
    }

    /// When the download ended; nil while it goes on.
    var endedAt: ContinuousClock.Instant? {
        condition.lock()
        defer { condition.unlock() }
        return endTime
    }

    /// Waits until the body may be handed over: once `start.bytes` arrived at
    /// `start.bytesPerSecond` or faster since the headers, or once the download ended.
    func waitForHandOver(_ start: StreamingStart) {
        condition.lock()
        defer { condition.unlock() }
        while end == nil {
            if written >= start.bytes {
                let elapsed = ContinuousClock.now - started
                let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
                if seconds <= 0 || Double(written) / seconds >= start.bytesPerSecond { return }
            }
            condition.wait()
        }
    }

    /// Waits until the download ended.
    func waitForEnd() -> End {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let end { return end }
            condition.wait()
        }
    }

    /// Stops a download that goes on (the reader gave up, the attempt's time ran out, the
    /// calling task was cancelled); nothing when it already ended.
    func abandon(_ code: NetworkError.Code, _ detail: String) {
        guard ending == nil else { return }
        stop(code, detail)
        // The transport ends the spool as it stops; should it be gone already, end it here,
        // so that no reader waits for a download nobody finishes.
        condition.lock()
        let bytes = written
        condition.unlock()
        finish(.failed(AttemptFailure(code: code, detail: detail, bytes: bytes)))
    }

    /// What a reader at `offset` may read: bytes available, the end of a complete body (0),
    /// or the download's failure. Waits while there is nothing yet.
    fileprivate func available(after offset: Int64) -> Result<Int64, AttemptFailure> {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if written > offset { return .success(written - offset) }
            switch end {
            case .complete: return .success(0)
            case .failed(let failure): return .failure(failure)
            case nil: condition.wait()
            }
        }
    }

    // MARK: The bodies being downloaded in this process, by path

    private static let live = Locked<[String: BodySpool]>([:])

    static func register(_ spool: BodySpool) {
        live.withLock { $0[spool.url.path] = spool }
    }

    static func unregister(_ spool: BodySpool) {
        live.withLock { table in
            if table[spool.url.path] === spool { table[spool.url.path] = nil }
        }
    }

    static func spool(at path: String) -> BodySpool? {
        live.withLock { $0[path] }
    }
}

/// Why a response body could not be read to its end.
public struct ResponseBodyReadError: Error, Sendable, CustomStringConvertible {
    /// The download of a body being read while it arrives failed (cut off, timed out, over the
    /// size limit, cancelled). `HTTPClient.withStreamingResponse` reports that failure itself
    /// (and retries it per policy): this error only unwinds the reader.
    public var downloadFailed: Bool
    public var description: String

    /// Whether `error` is the failed download of a streamed body (whatever a reader made of it
    /// is beside the point: the client reports the download's failure).
    public static func isDownloadFailure(_ error: any Error) -> Bool {
        (error as? ResponseBodyReadError)?.downloadFailed ?? false
    }
}

/// Reads a response body file from its start to its end, in order: a finished file as it is;
/// one that `HTTPClient.withStreamingResponse` is still downloading up to what has arrived,
/// waiting for more until the download completes (then the end of the file is the end of the
/// body) or fails (then ``ResponseBodyReadError`` with `downloadFailed`).
///
/// One reader per pass over the body, used from one thread; several may read the same body.
public final class ResponseBodyReader {
    private let fd: Int32
    private let spool: BodySpool?
    private var offset: Int64 = 0
    /// The file's path, for messages.
    public let path: String

    /// Opens the body file at `url`.
    /// - Throws: ``ResponseBodyReadError`` when it cannot be opened (`downloadFailed` when its
    ///   download failed and removed it).
    public init(_ url: URL) throws {
        path = url.path
        spool = BodySpool.spool(at: path)
        fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            let reason = String(cString: strerror(errno))
            if let spool, case .failed(let failure) = spool.ending {
                throw ResponseBodyReadError(downloadFailed: true, description: "the download failed: \(failure.summary)")
            }
            throw ResponseBodyReadError(downloadFailed: false, description: "cannot open \(path): \(reason)")
        }
    }

    deinit {
        close(fd)
    }

    /// Reads the next bytes into `buffer`: at least one, unless the body ended (0). Waits while
    /// a download is behind.
    /// - Throws: ``ResponseBodyReadError`` (the download failed, or the file cannot be read).
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard let base = buffer.baseAddress, !buffer.isEmpty else { return 0 }
        var wanted = buffer.count
        if let spool {
            switch spool.available(after: offset) {
            case .success(let available):
                if available == 0 { return 0 }
                wanted = Int(min(Int64(wanted), available))
            case .failure(let failure):
                throw ResponseBodyReadError(downloadFailed: true, description: "the download failed: \(failure.summary)")
            }
        }
        while true {
            let n = pread(fd, base, wanted, off_t(offset))
            if n < 0 {
                if errno == EINTR { continue }
                throw ResponseBodyReadError(downloadFailed: false, description: "cannot read \(path): \(String(cString: strerror(errno)))")
            }
            offset += Int64(n)
            return n
        }
    }

    /// Reads up to `count` bytes from the start (fewer when the body is shorter): a body's
    /// first bytes, to tell what it is.
    public func head(_ count: Int) throws -> [UInt8] {
        var head = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let n = try head.withUnsafeMutableBytes { try self.read(into: UnsafeMutableRawBufferPointer(rebasing: $0[filled...])) }
            if n == 0 { break }
            filled += n
        }
        return Array(head[..<filled])
    }

    /// Passes the rest of the body to `body` in chunks of at most `chunkSize` bytes.
    public func forEachChunk(chunkSize: Int = 256 * 1024, _ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, chunkSize), alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let n = try self.read(into: buffer)
            if n == 0 { return }
            try body(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
        }
    }
}
