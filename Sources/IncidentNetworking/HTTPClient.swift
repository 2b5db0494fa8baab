import Foundation

/// Sends a router's request and hands the caller the response body as a file.
///
/// The implementation is `RetryingHTTPClient` over an `HTTPTransport`: `URLSessionHTTPClient`
/// (real HTTP) and `StubHTTPClient` (scripted outcomes or `Router.sampleResponse`, without
/// sockets, for unit tests of callers) differ only in their transport, so both retry alike.
public protocol HTTPClient: Sendable {
    /// Sends the request (retrying per policy), streams a 2xx body to a temporary file, passes
    /// it to `body`, and removes the file afterwards on every path (success, throw,
    /// cancellation). The file is valid only inside `body`.
    ///
    /// - Parameters:
    ///   - target: the call to make.
    ///   - label: a short name for logs and events, e.g. `gits.getIncidentInfo`.
    ///   - body: reads the file (e.g. a streaming parser) and returns a result.
    /// - Returns: what `body` returned.
    /// - Throws: `NetworkError` for every failure to get a 2xx response (including a non-2xx
    ///   status and cancellation); errors thrown by `body` are rethrown unchanged.
    func withResponse<R>(for target: any Router, label: String, _ body: (HTTPResponseFile) throws -> R) async throws -> R

    /// As ``withResponse(for:label:_:)``, but `body` may start while a 2xx response's body is
    /// still being downloaded (when ``NetworkConfiguration/streamingStart`` says: a large body
    /// arriving fast): read `fileURL` with ``ResponseBodyReader``, which follows the file to the
    /// body's end (a plain read would stop early). Download and reading then overlap.
    ///
    /// The same rules as `withResponse` decide each attempt (status, redirects, size limit,
    /// `Content-Length`, timeouts, retries, events); a download that fails after `body` began
    /// makes the reader throw (``ResponseBodyReadError/isDownloadFailure(_:)``), and then
    /// `body`'s outcome is discarded: the failure is retried per policy, each retry calling
    /// `body` again from the first byte of a new response (so anything `body` did must be
    /// undone when it throws: a transaction rolled back), or thrown as a `NetworkError`.
    /// `body`'s own error (a malformed document, an error envelope) ends the download and is
    /// rethrown unchanged. A result is returned only once the download completed.
    ///
    /// `body` blocks its thread while it waits for bytes: call this from a task whose executor
    /// may block (a poll runs on its store's `StoreExecutor`), not on Swift's cooperative pool.
    ///
    /// Default: `withResponse` (the whole body first), for clients that cannot stream.
    func withStreamingResponse<R>(for target: any Router, label: String, _ body: (HTTPResponseFile) throws -> R) async throws -> R
}

extension HTTPClient {
    public func withStreamingResponse<R>(for target: any Router, label: String, _ body: (HTTPResponseFile) throws -> R) async throws -> R {
        try await withResponse(for: target, label: label, body)
    }
}

/// A complete 2xx response whose body is on disk.
public struct HTTPResponseFile: Sendable {
    /// The body, already decoded from any `Content-Encoding` (gzip/deflate); removed when the
    /// `withResponse` closure returns.
    public let fileURL: URL
    /// The HTTP status, 200–299.
    public let statusCode: Int
    /// Response headers with lower-cased names (repeated headers joined with ", ").
    public let headers: [String: String]
    /// The `Content-Type` header, if any, e.g. `text/xml;charset=UTF-8`.
    public let contentType: String?
    /// Size of the file in bytes; for a body still being downloaded (streaming), its announced
    /// `Content-Length` (0 when none).
    public let byteCount: Int64
    /// The file's owner when a transport of this module wrote it (it holds the file's lock).
    let body: TemporaryBody?
    /// The download still under way when the response was handed over (streaming).
    let spool: BodySpool?

    /// A response whose body an outside transport wrote to `fileURL` (removed after the call).
    ///
    /// - Parameter headers: header names are lower-cased here.
    public init(fileURL: URL, statusCode: Int, headers: [String: String], byteCount: Int64) {
        self.init(body: nil, fileURL: fileURL, statusCode: statusCode, headers: headers, byteCount: byteCount)
    }

    init(body: TemporaryBody, spool: BodySpool? = nil, statusCode: Int, headers: [String: String], byteCount: Int64) {
        self.init(body: body, spool: spool, fileURL: body.url, statusCode: statusCode, headers: headers, byteCount: byteCount)
    }

    private init(body: TemporaryBody?, spool: BodySpool? = nil, fileURL: URL, statusCode: Int, headers: [String: String], byteCount: Int64) {
        self.body = body
        self.spool = spool
        self.fileURL = fileURL
        self.statusCode = statusCode
        self.headers = HeaderFields.lowercased(headers)
        self.contentType = self.headers["content-type"]
        self.byteCount = byteCount
    }

    /// Removes the file (and releases its lock).
    func remove() {
        if let body {
            body.remove()
        } else {
            try? FileManager.default.removeItem(at: fileURL)
        }
    }
}

enum HeaderFields {
    static func lowercased(_ headers: [String: String]) -> [String: String] {
        var result: [String: String] = [:]
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) {
            let key = name.lowercased()
            if let existing = result[key] {
                result[key] = existing + ", " + value
            } else {
                result[key] = value
            }
        }
        return result
    }
}

/// The first bytes of an error body, for `NetworkError.bodyExcerpt`.
enum BodyExcerpt {
    /// Bytes kept in an excerpt.
    static let limit = 4096
    /// Bytes collected before redaction: a secret that straddles `limit` is still whole.
    static let collectLimit = limit + 512

    /// Decodes as UTF-8 (invalid bytes become U+FFFD), redacts, then cuts to `limit` bytes at
    /// a character boundary. Nil for an empty body.
    static func make(_ data: Data) -> String? {
        guard !data.isEmpty else { return nil }
        let text = Redaction.redact(String(decoding: data.prefix(collectLimit), as: UTF8.self))
        var result = ""
        var bytes = 0
        for character in text {
            let size = character.utf8.count
            if bytes + size > limit { break }
            result.append(character)
            bytes += size
        }
        return result
    }
}
