import Foundation
internal import CZlib
import IncidentNetworking

/// gzip bodies (RFC 1952), inflated with zlib as they are read: the Netherlands' NDW publishes
/// DATEX II as `.xml.gz` files served as `application/gzip` or `application/octet-stream`
/// without `Content-Encoding`, so the body arrives compressed and is recognised by its magic
/// bytes (`1F 8B`), not by a header. Memory: one 64 KiB input and one 256 KiB output buffer,
/// whatever the sizes. Concatenated members (RFC 1952 §2.2) are read one after another.
///
/// Why zlib and not libxml2's own decompression: libxml2 inflates only in its file and I/O
/// readers, not in the push parser that the XML reader drives chunk by chunk (its limits are
/// checked after every chunk); zlib's `inflate` fits that loop as it is.
enum Gzip {
    /// Whether `head` (a body's first bytes) starts a gzip member.
    static func isGzip(_ head: [UInt8]) -> Bool {
        head.count >= 2 && head[0] == 0x1F && head[1] == 0x8B
    }

    /// Inflates `file` and passes the document in chunks of at most 256 KiB to `body`.
    ///
    /// - Throws: ``FeedError`` `malformedBody` for a stream that is corrupt or cut off (with the
    ///   compressed byte offset, never a byte of the body), `unreadableFile` when the file
    ///   cannot be read; what `body` throws.
    static func inflate(_ file: URL, provider: String, _ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        let reader = try BodyFile.open(file, provider: provider)
        let inputSize = 64 * 1024
        let input = UnsafeMutableRawBufferPointer.allocate(byteCount: inputSize, alignment: 16)
        defer { input.deallocate() }
        var stream = z_stream()
        guard czlib_inflate_init_gzip(&stream) == Z_OK else {
            throw FeedError(.malformedBody, provider: provider, message: "zlib could not start inflating (out of memory?); nothing was stored")
        }
        defer { inflateEnd(&stream) }
        let outputSize = 256 * 1024
        let output = UnsafeMutablePointer<UInt8>.allocate(capacity: outputSize)
        defer { output.deallocate() }
        var consumed = 0
        var status = Z_OK
        func corrupt(_ what: String) -> FeedError {
            FeedError(.malformedBody, provider: provider,
                      message: "the gzip-compressed body \(what) at compressed byte \(consumed - Int(stream.avail_in)); nothing was stored")
        }
        while true {
            let count: Int
            do {
                count = try reader.read(into: input)
            } catch let error as ResponseBodyReadError where !error.downloadFailed {
                throw FeedError(.unreadableFile, provider: provider, message: "cannot read \(file.path): \(error.description)")
            }
            if count == 0 {
                guard status == Z_STREAM_END else { throw corrupt("ends before its gzip stream does (a transfer cut short?)") }
                return
            }
            consumed += count
            do {
                let raw = UnsafeRawBufferPointer(rebasing: input[0..<count])
                stream.next_in = UnsafeMutablePointer(mutating: raw.bindMemory(to: Bytef.self).baseAddress)
                stream.avail_in = uInt(raw.count)
                // On while input is left, or while the last call filled the output (more may wait).
                repeat {
                    if status == Z_STREAM_END {
                        if stream.avail_in == 0 { break }
                        // Another member follows (RFC 1952 §2.2).
                        guard inflateReset(&stream) == Z_OK else { throw corrupt("cannot be read on") }
                    }
                    stream.next_out = output
                    stream.avail_out = uInt(outputSize)
                    status = CZlib.inflate(&stream, Z_NO_FLUSH)
                    switch status {
                    case Z_OK, Z_STREAM_END, Z_BUF_ERROR:
                        break
                    case Z_DATA_ERROR:
                        throw corrupt("is corrupt (zlib: \(stream.msg.map { String(cString: $0) } ?? "invalid data"))")
                    default:
                        throw corrupt("cannot be inflated (zlib status \(status))")
                    }
                    let produced = outputSize - Int(stream.avail_out)
                    if produced > 0 { try body(UnsafeRawBufferPointer(start: output, count: produced)) }
                    if status == Z_BUF_ERROR { break }  // it needs more input
                } while stream.avail_in > 0 || stream.avail_out == 0
                stream.next_in = nil
            }
        }
    }

    /// The first `count` bytes of the inflated `file` (for sniffing what it holds); fewer when
    /// it is shorter, or corrupt after them (reading it whole then says so).
    /// - Throws: what ``inflate(_:provider:_:)`` throws when not one byte could be inflated.
    static func head(_ file: URL, provider: String, count: Int = 1024) throws -> [UInt8] {
        var head: [UInt8] = []
        struct Enough: Error {}
        do {
            try inflate(file, provider: provider) { chunk in
                head += chunk.prefix(count - head.count)
                if head.count >= count { throw Enough() }
            }
        } catch is Enough {
        } catch where !head.isEmpty {
        }
        return head
    }
}
