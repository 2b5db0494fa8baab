import Foundation
import IncidentNetworking

/// Reading a response body file from start to end, whether it is complete (a saved file, a
/// page read after its download) or still arriving (a poll read while it downloads,
/// `HTTPClient.withStreamingResponse`): the providers' `read` (sniffing, gzip, the XML and JSON
/// record readers) read a body through here, never with a plain file read, which would take
/// the end of what has arrived so far for the end of the body. (Only Open511's page links are
/// read with the readers' own file loop: a paged answer is read once complete.)
enum BodyFile {
    /// Opens `file` for one pass from its start.
    /// - Throws: ``FeedError`` `unreadableFile`; a failed download's `ResponseBodyReadError`
    ///   as it is (the HTTP client reports that failure).
    static func open(_ file: URL, provider: String) throws -> ResponseBodyReader {
        try readable(file, provider: provider) { try ResponseBodyReader(file) }
    }

    /// The first `count` bytes (fewer when the body is shorter).
    static func head(_ file: URL, provider: String, count: Int = 1024) throws -> [UInt8] {
        let reader = try Self.open(file, provider: provider)
        return try readable(file, provider: provider) { try reader.head(count) }
    }

    /// Passes the whole body to `body` in chunks of at most `chunkSize` bytes, in order.
    /// - Throws: as ``open(_:provider:)``; what `body` throws.
    static func chunks(_ file: URL, provider: String, chunkSize: Int = 256 * 1024,
                       _ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        let reader = try Self.open(file, provider: provider)
        try readable(file, provider: provider) { try reader.forEachChunk(chunkSize: chunkSize, body) }
    }

    private static func readable<T>(_ file: URL, provider: String, _ read: () throws -> T) throws -> T {
        do {
            return try read()
        } catch let error as ResponseBodyReadError where !error.downloadFailed {
            throw FeedError(.unreadableFile, provider: provider, message: "cannot read \(file.path): \(error.description)")
        }
    }
}
