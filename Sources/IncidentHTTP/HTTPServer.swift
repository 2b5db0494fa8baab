internal import CMicroHTTPD
import Foundation
import Synchronization

/// Where and how an ``HTTPServer`` listens, and its limits.
public struct HTTPServerSettings: Sendable {
    /// An IPv4 or IPv6 address in text form (`127.0.0.1`, `0.0.0.0`, `::1`).
    public var address: String
    /// 0: a port the system chooses (``HTTPServer/port`` tells which).
    public var port: UInt16
    /// Connections open at once; a further one is closed as soon as it is accepted (the accept
    /// policy refuses it), so its client learns at once instead of waiting in the listen backlog.
    public var connectionLimit = 1024
    /// Connections open at once from one client address (0: no limit of its own).
    public var perClientLimit = 0
    /// Seconds a connection may stay idle (nothing received nor sent) before it is closed:
    /// a client that stops reading, or sends its request a byte at a time and then stops.
    public var idleTimeoutSeconds = 30
    /// Seconds a response may take from the request's arrival to its last byte; a longer one is
    /// cut off (the connection closed, so a client never takes a cut body for a whole one).
    public var requestTimeoutSeconds = 120
    /// Bytes a connection may use for its request line, headers and query parameters
    /// (libmicrohttpd's per-connection pool, MHD_OPTION_CONNECTION_MEMORY_LIMIT; about 56 bytes
    /// per parameter besides its text): a request within it reaches the handler, which answers
    /// whatever it holds. Beyond it libmicrohttpd answers by itself: 414 (a request line that
    /// does not fit) or 431 (headers or parameters), with its own short HTML body. Only the
    /// pages a request uses are resident.
    public var memoryPerConnection = 256 * 1024

    public init(address: String, port: UInt16) {
        self.address = address
        self.port = port
    }
}

/// A finished request, for the access log and the request counters.
public struct HTTPExchange: Sendable {
    public var method: String
    /// The path as sent (percent-encoded, without the query): `/items/2%00x` is logged as such,
    /// not as the decoded path libmicrohttpd's C string cut at the NUL.
    public var path: String
    public var client: String
    public var status: Int
    public var route: String
    /// Body bytes sent (after any content coding).
    public var bytes: Int
    public var seconds: Double
    /// Whether the whole response was sent (false: the client left, a time limit or a failure
    /// cut it off).
    public var complete: Bool
}

/// An HTTP/1.1 server on libmicrohttpd (<https://www.gnu.org/software/libmicrohttpd/manual/>),
/// with a thread per connection: the handler runs on the connection's thread and may block (a
/// database query), and a streamed body is written by a producer thread of its own through a
/// bounded buffer, so a slow client holds one thread and at most
/// ``BodyStream/maxQueuedBytes`` of memory, and never holds up another client.
///
/// libmicrohttpd parses requests (no HTTP parsing here): it percent-decodes the path and the
/// query parameters, answers `400` to a malformed request line or header itself, and enforces
/// the connection limits and the idle timeout.
public final class HTTPServer: @unchecked Sendable {  // `daemon` is set once in init
    public typealias Handler = @Sendable (HTTPRequest) -> HTTPResponse

    final class Core: @unchecked Sendable {  // immutable but for `streams`, behind its Mutex
        let handler: Handler
        let failure: @Sendable (any Error, HTTPRequest) -> HTTPResponse
        let completed: @Sendable (HTTPExchange) -> Void
        let requestTimeout: TimeInterval
        let streams = Mutex<(stopping: Bool, open: [ObjectIdentifier: BodyStream])>((false, [:]))

        init(handler: @escaping Handler, failure: @escaping @Sendable (any Error, HTTPRequest) -> HTTPResponse,
             completed: @escaping @Sendable (HTTPExchange) -> Void, requestTimeout: TimeInterval) {
            self.handler = handler
            self.failure = failure
            self.completed = completed
            self.requestTimeout = requestTimeout
        }
    }

    /// One request on its connection (libmicrohttpd's `con_cls`).
    final class Exchange: @unchecked Sendable {  // used on its connection's thread only
        let started = Date()
        /// The request target as sent (``HTTPRequest/target``), from the URI log callback.
        var target = ""
        var headersRead = false
        var request = HTTPRequest(method: "", path: "")
        var status = 0
        var route = ""
        var bytes = 0
        var stream: BodyStream?
        var core: Core?
    }

    private let daemon: OpaquePointer
    private let core: Core
    private let limit: UnsafeMutableRawPointer
    private let context: Unmanaged<Core>
    /// The port it listens on.
    public let port: UInt16

    /// Starts listening at once.
    /// - Parameters:
    ///   - handler: answers each request, on the connection's thread.
    ///   - failure: the response when a streamed body's producer fails before its first byte
    ///     (a failure after it closes the connection instead).
    ///   - completed: called once per request when its response is finished or abandoned.
    /// - Throws: ``HTTPServerError`` when the address is not one or cannot be bound, or when
    ///   libmicrohttpd is not installed ("incidents serve needs libmicrohttpd12: …").
    public init(_ settings: HTTPServerSettings, handler: @escaping Handler,
                failure: @escaping @Sendable (any Error, HTTPRequest) -> HTTPResponse,
                completed: @escaping @Sendable (HTTPExchange) -> Void) throws {
        if let failure = LibMicroHTTPD.loadFailure() { throw HTTPServerError(failure) }
        let core = Core(handler: handler, failure: failure, completed: completed, requestTimeout: TimeInterval(settings.requestTimeoutSeconds))
        let context = Unmanaged.passRetained(core)
        self.core = core
        self.context = context
        guard let limit = cmhd_limit_create(UInt32(settings.connectionLimit)) else {
            context.release()
            throw HTTPServerError("out of memory")
        }
        self.limit = limit
        // No MHD_USE_ERROR_LOG: its lines are not logfmt; what a request did is in the access log.
        var flags = UInt32(MHD_USE_INTERNAL_POLLING_THREAD.rawValue | MHD_USE_THREAD_PER_CONNECTION.rawValue)
        var started: OpaquePointer?
        var v4 = sockaddr_in(), v6 = sockaddr_in6()
        if inet_pton(AF_INET, settings.address, &v4.sin_addr) == 1 {
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = settings.port.bigEndian
            started = withUnsafePointer(to: &v4) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                    Self.start(flags, address, settings, limit, context.toOpaque())
                }
            }
        } else if inet_pton(AF_INET6, settings.address, &v6.sin6_addr) == 1 {
            flags |= UInt32(MHD_USE_IPv6.rawValue)
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = settings.port.bigEndian
            started = withUnsafePointer(to: &v6) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                    Self.start(flags, address, settings, limit, context.toOpaque())
                }
            }
        } else {
            free(limit)
            context.release()
            throw HTTPServerError("'\(settings.address)' is not an IPv4 or IPv6 address")
        }
        guard let started else {
            free(limit)
            context.release()
            throw HTTPServerError("cannot listen on \(settings.address) port \(settings.port) (in use, or not an address of this host)")
        }
        daemon = started
        port = cmhd_bound_port(started)
    }

    private static func start(_ flags: UInt32, _ address: UnsafePointer<sockaddr>, _ settings: HTTPServerSettings,
                              _ limit: UnsafeMutableRawPointer, _ context: UnsafeMutableRawPointer) -> OpaquePointer? {
        cmhd_start(flags, address, limit, UInt32(settings.perClientLimit), UInt32(settings.idleTimeoutSeconds),
                   settings.memoryPerConnection, Callbacks.access, context, Callbacks.completed, Callbacks.target)
    }

    /// Stops accepting, cuts off the bodies still being sent, and waits for the connection
    /// threads to end.
    public func stop() {
        let open = core.streams.withLock { state in
            state.stopping = true
            return Array(state.open.values)
        }
        open.forEach { $0.stop() }
        MHD_stop_daemon(daemon)
        free(limit)
        context.release()
    }
}

/// The server could not start.
public struct HTTPServerError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// libmicrohttpd's callbacks. They run on its connection threads: static members of a type,
/// never main-actor isolated (a closure at the top level of `main.swift` would be, and traps).
enum Callbacks {
    /// The request target as sent, before libmicrohttpd percent-decodes the path in place (its
    /// decoded path is a C string, which ends at a `%00`): the exchange starts here.
    static let target: cmhd_uri_log = { _, uri, _ in
        let exchange = HTTPServer.Exchange()
        exchange.target = uri.map { String(cString: $0) } ?? ""
        return Unmanaged.passRetained(exchange).toOpaque()
    }

    static let access: MHD_AccessHandlerCallback = { context, connection, url, method, version, _, uploadSize, state in
        guard let context, let connection, let state else { return MHD_Result.NO }
        let core = Unmanaged<HTTPServer.Core>.fromOpaque(context).takeUnretainedValue()
        if state.pointee == nil { state.pointee = Unmanaged.passRetained(HTTPServer.Exchange()).toOpaque() }
        guard let pointer = state.pointee else { return MHD_Result.NO }
        let exchange = Unmanaged<HTTPServer.Exchange>.fromOpaque(pointer).takeUnretainedValue()
        guard exchange.headersRead else {
            // The first call comes with the headers: set up the request, answer on the next.
            exchange.request = request(connection, url: url, method: method, version: version, target: exchange.target)
            exchange.headersRead = true
            return MHD_Result.YES
        }
        if let uploadSize, uploadSize.pointee > 0 {
            uploadSize.pointee = 0  // a request body is read and dropped: no route takes one
            return MHD_Result.YES
        }
        if core.streams.withLock({ $0.stopping }) {
            return queue(HTTPResponse(status: 503, contentType: "text/plain", text: "stopping\n", route: "stopping"),
                         connection, exchange, core)
        }
        return queue(core.handler(exchange.request), connection, exchange, core)
    }

    static let completed: MHD_RequestCompletedCallback = { _, _, state, termination in
        guard let state, let pointer = state.pointee else { return }
        state.pointee = nil
        let exchange = Unmanaged<HTTPServer.Exchange>.fromOpaque(pointer).takeRetainedValue()
        exchange.stream?.stop()
        // `completed` is the context, which the access handler also gets; the daemon passes
        // it here as `cls`, but the exchange needs its core: taken from the stream's owner.
        guard let core = exchange.core else { return }
        if let stream = exchange.stream { _ = core.streams.withLock { $0.open.removeValue(forKey: ObjectIdentifier(stream)) } }
        core.completed(HTTPExchange(
            method: exchange.request.method,
            path: exchange.target.isEmpty ? exchange.request.path : String(exchange.target.prefix { $0 != "?" }),
            client: exchange.request.client,
            status: exchange.status, route: exchange.route, bytes: exchange.bytes,
            seconds: Date().timeIntervalSince(exchange.started),
            complete: termination == .REQUEST_TERMINATED_COMPLETED_OK))
    }

    private static func request(_ connection: OpaquePointer, url: UnsafePointer<CChar>?, method: UnsafePointer<CChar>?,
                                version: UnsafePointer<CChar>?, target: String) -> HTTPRequest {
        var request = HTTPRequest(method: method.map { String(cString: $0) } ?? "", path: url.map { String(cString: $0) } ?? "")
        request.target = target
        request.version = version.map { String(cString: $0) } ?? ""
        let box = Unmanaged.passRetained(ValuesBox())
        defer { box.release() }
        MHD_get_connection_values_n(connection, .GET_ARGUMENT_KIND, collect, box.toOpaque())
        request.query = box.takeUnretainedValue().values.map { ($0.name, $0.value) }
        box.takeUnretainedValue().values = []
        MHD_get_connection_values_n(connection, .HEADER_KIND, collect, box.toOpaque())
        for (name, value) in box.takeUnretainedValue().values {
            let key = name.lowercased()
            request.headers[key] = request.headers[key].map { $0 + ", " + (value ?? "") } ?? (value ?? "")
        }
        var address = [CChar](repeating: 0, count: 64)
        cmhd_client_address(connection, &address, socklen_t(address.count))
        request.client = String(decoding: address.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        address = [CChar](repeating: 0, count: 80)
        cmhd_local_address(connection, &address, address.count)
        request.local = String(decoding: address.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return request
    }

    final class ValuesBox {
        var values: [(name: String, value: String?)] = []
    }

    /// Keys and values as sent (after percent-decoding), NUL bytes and invalid UTF-8 included
    /// as U+FFFD, so that the handler sees them and refuses them.
    static let collect: MHD_KeyValueIteratorN = { context, _, key, keySize, value, valueSize in
        guard let context, let key else { return MHD_Result.YES }
        let box = Unmanaged<ValuesBox>.fromOpaque(context).takeUnretainedValue()
        func text(_ pointer: UnsafePointer<CChar>, _ count: Int) -> String {
            String(decoding: UnsafeRawBufferPointer(start: pointer, count: count), as: UTF8.self)
        }
        box.values.append((text(key, keySize), value.map { text($0, valueSize) }))
        return MHD_Result.YES
    }

    private static func queue(_ response: HTTPResponse, _ connection: OpaquePointer, _ exchange: HTTPServer.Exchange,
                              _ core: HTTPServer.Core) -> MHD_Result {
        exchange.core = core
        var response = response
        var made: OpaquePointer?
        switch response.body {
        case .bytes(let bytes):
            made = bytes.withUnsafeBytes { body in
                MHD_create_response_from_buffer(body.count, UnsafeMutableRawPointer(mutating: body.baseAddress), .RESPMEM_MUST_COPY)
            }
            exchange.bytes = bytes.count
        case .stream(let produce):
            let stream = BodyStream(deadline: exchange.started.addingTimeInterval(core.requestTimeout))
            let registered = core.streams.withLock { state in
                if state.stopping { return false }
                state.open[ObjectIdentifier(stream)] = stream
                return true
            }
            guard registered else { return MHD_Result.NO }
            exchange.stream = stream
            let writer = BodyWriter(stream)
            Thread.detachNewThread {
                do {
                    try produce(writer)
                    try writer.finish()
                    stream.finish(nil)
                } catch {
                    stream.finish(error)
                }
            }
            let (_, failure) = stream.awaitStart()
            if let failure {
                stream.stop()
                response = core.failure(failure, exchange.request)
                if case .bytes(let bytes) = response.body {
                    made = bytes.withUnsafeBytes { body in
                        MHD_create_response_from_buffer(body.count, UnsafeMutableRawPointer(mutating: body.baseAddress), .RESPMEM_MUST_COPY)
                    }
                    exchange.bytes = bytes.count
                }
            } else {
                made = MHD_create_response_from_callback(UInt64.max, 64 * 1024, read,
                                                         Unmanaged.passRetained(exchange).toOpaque(), release)
            }
        }
        guard let made else { return MHD_Result.NO }
        defer { MHD_destroy_response(made) }
        for (name, value) in response.headers {
            MHD_add_response_header(made, name, value)
        }
        exchange.status = response.status
        exchange.route = response.route
        return MHD_queue_response(connection, UInt32(response.status), made)
    }

    static let read: MHD_ContentReaderCallback = { context, _, buffer, capacity in
        guard let context, let buffer else { return -2 }
        let exchange = Unmanaged<HTTPServer.Exchange>.fromOpaque(context).takeUnretainedValue()
        guard let stream = exchange.stream else { return -2 }
        let count = stream.read(into: buffer, capacity: capacity)
        if count > 0 { exchange.bytes += count }
        return count
    }

    static let release: MHD_ContentReaderFreeCallback = { context in
        guard let context else { return }
        let exchange = Unmanaged<HTTPServer.Exchange>.fromOpaque(context).takeRetainedValue()
        exchange.stream?.stop()
    }
}
