import Foundation

/// One HTTP request as libmicrohttpd parsed it: the method, the path (percent-decoded by
/// libmicrohttpd, without the query), the query parameters in the order sent (a key may repeat;
/// a key sent without `=` has the value nil) and the headers.
public struct HTTPRequest: Sendable {
    public var method: String
    public var path: String
    public var query: [(name: String, value: String?)]
    /// Header names lowercased (RFC 9110 §5.1: names are case-insensitive); a repeated header's
    /// values joined with `, ` (§5.3).
    public var headers: [String: String]
    /// The client's address (`127.0.0.1`), for the access log.
    public var client: String
    /// The request target as sent (`/collections/incidents/items/2%00x?f=json`), not decoded.
    public var target = ""
    /// `HTTP/1.1` or `HTTP/1.0`.
    public var version = "HTTP/1.1"
    /// The address and port the request came in on, as a URL's authority (`127.0.0.1:8080`,
    /// `[::1]:8080`): the host of an HTTP/1.0 request without `Host`.
    public var local = ""

    public init(method: String, path: String, query: [(name: String, value: String?)] = [], headers: [String: String] = [:],
                client: String = "") {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.client = client
    }

    /// The value of header `name` (any case).
    public func header(_ name: String) -> String? { headers[name.lowercased()] }

    /// Whether the path as sent holds a control character (U+0000–U+001F, U+007F), raw or
    /// percent-encoded (`%00`, `%0A`): libmicrohttpd hands the decoded path over as a C string,
    /// so `/items/2%00junk` would read as `/items/2`; such a path names no resource.
    public var pathHasControlCharacters: Bool {
        func control(_ byte: UInt8) -> Bool { byte < 0x20 || byte == 0x7F }
        if path.utf8.contains(where: control) { return true }
        let raw = Array(target.utf8.prefix { $0 != UInt8(ascii: "?") })
        var index = 0
        while index < raw.count {
            if control(raw[index]) { return true }
            if raw[index] == UInt8(ascii: "%"), index + 2 < raw.count,
               let byte = UInt8(String(decoding: raw[(index + 1)...(index + 2)], as: UTF8.self), radix: 16), control(byte) {
                return true
            }
            index += 1
        }
        return false
    }
}

/// A response: status, headers and a body given whole or written as it is produced.
public struct HTTPResponse: Sendable {
    public var status: Int
    public var headers: [(name: String, value: String)]
    public var body: Body
    /// The route that answered (`/collections/{collectionId}/items`), for the access log and
    /// the request counters: a fixed set of labels, never the path as sent.
    public var route: String

    public enum Body: Sendable {
        case bytes([UInt8])
        /// Written by `produce` on a thread of its own while the client reads it, through a
        /// buffer of at most ``BodyStream/maxQueuedBytes``: memory does not depend on the body's
        /// length, and a slow client slows the producer down instead of filling memory.
        case stream(@Sendable (BodyWriter) throws -> Void)
    }

    public init(status: Int, headers: [(name: String, value: String)] = [], body: Body = .bytes([]), route: String) {
        self.status = status
        self.headers = headers
        self.body = body
        self.route = route
    }

    public init(status: Int, contentType: String, text: String, route: String) {
        self.init(status: status, headers: [("Content-Type", contentType)], body: .bytes(Array(text.utf8)), route: route)
    }

    /// The value of header `name` (any case).
    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }
}

/// Where a streamed body's producer writes. Each write may wait while the client is slower than
/// the producer; it throws ``BodyStream/Stopped`` once the client is gone, the request's time is
/// up or the server stops, so the producer unwinds (closing its database statement).
public final class BodyWriter: @unchecked Sendable {  // used by one producer thread at a time
    let stream: BodyStream
    /// A transformation of the bytes before they are queued (gzip): called with each write,
    /// then once with no bytes and `true` when the producer is done; returns what to send.
    public var transform: ((UnsafeRawBufferPointer, Bool) throws -> [UInt8])?

    init(_ stream: BodyStream) {
        self.stream = stream
    }

    /// Writes `text` as UTF-8.
    public func write(_ text: String) throws {
        var text = text
        try text.withUTF8 { try write(bytes: UnsafeRawBufferPointer($0)) }
    }

    public func write(bytes: UnsafeRawBufferPointer) throws {
        guard !bytes.isEmpty else { return }
        if let transform {
            let out = try transform(bytes, false)
            if !out.isEmpty { try stream.enqueue(out) }
        } else {
            try stream.enqueue(Array(bytes))
        }
    }

    /// Ends the transformation (a gzip trailer); called once the producer returned.
    func finish() throws {
        if let transform {
            let out = try transform(UnsafeRawBufferPointer(start: nil, count: 0), true)
            if !out.isEmpty { try stream.enqueue(out) }
        }
    }
}

/// The bounded buffer between a body's producer thread and libmicrohttpd's connection thread.
final class BodyStream: @unchecked Sendable {  // every field is behind `condition`
    /// The most bytes queued and not yet sent: about four 64 KiB chunks of the encoders.
    static let maxQueuedBytes = 256 * 1024

    /// Thrown to the producer when nobody will read what it writes.
    struct Stopped: Error {}

    private let condition = NSCondition()
    private var chunks: [[UInt8]] = []
    private var queued = 0
    private var current: [UInt8] = []
    private var offset = 0
    private var finished = false
    private var failure: (any Error)?
    private var stopped = false
    private var started = false
    let deadline: Date

    init(deadline: Date) {
        self.deadline = deadline
    }

    func enqueue(_ bytes: [UInt8]) throws {
        condition.lock()
        defer { condition.unlock() }
        while queued >= Self.maxQueuedBytes && !stopped {
            if !condition.wait(until: deadline) { stopped = true }
        }
        guard !stopped else { throw Stopped() }
        chunks.append(bytes)
        queued += bytes.count
        started = true
        condition.broadcast()
    }

    /// The producer's end: `error` when it failed.
    func finish(_ error: (any Error)?) {
        condition.lock()
        finished = true
        failure = error
        condition.broadcast()
        condition.unlock()
    }

    /// The client is gone or the server stops: the producer's next write throws.
    func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }

    /// What came first: bytes, the end, or a failure (nil error: bytes or a clean end).
    /// Waits until then or the deadline (then a ``Stopped`` failure).
    func awaitStart() -> (started: Bool, failure: (any Error)?) {
        condition.lock()
        defer { condition.unlock() }
        while !started && !finished {
            if !condition.wait(until: deadline) {
                stopped = true
                condition.broadcast()
                return (false, Stopped())
            }
        }
        return (started, started ? nil : failure)
    }

    /// Copies up to `capacity` bytes into `buffer`; waits for some. Returns the count, -1 at
    /// the end, -2 on a failure (libmicrohttpd then closes the connection: a body cut short is
    /// never taken for a whole one).
    func read(into buffer: UnsafeMutableRawPointer, capacity: Int) -> Int {
        condition.lock()
        defer { condition.unlock() }
        while offset >= current.count {
            if !chunks.isEmpty {
                current = chunks.removeFirst()
                offset = 0
                queued -= current.count
                condition.broadcast()
                continue
            }
            if finished { return failure == nil ? -1 : -2 }
            if stopped { return -2 }
            if !condition.wait(until: deadline) {
                stopped = true
                condition.broadcast()
                return -2
            }
        }
        let count = min(capacity, current.count - offset)
        current.withUnsafeBytes { bytes in
            if let base = bytes.baseAddress { buffer.copyMemory(from: base + offset, byteCount: count) }
        }
        offset += count
        return count
    }
}
