import Foundation
internal import CZlib

/// A gzip stream (RFC 1952) compressed with zlib as its input comes, for `incidents serve`'s
/// responses to clients that accept `gzip` (RFC 9110 §8.4.1.3). Here because this target is the
/// one that imports zlib. Memory: zlib's deflate state (about 256 KiB at the default window) and
/// the output of one call.
public final class GzipDeflater {
    private var stream = z_stream()
    private var ended = false

    /// - Parameter level: 1 (fastest) … 9 (smallest); 6 is zlib's default.
    /// - Throws: ``GzipDeflaterError`` when zlib cannot start (out of memory).
    public init(level: Int32 = 6) throws {
        guard czlib_deflate_init_gzip(&stream, level) == Z_OK else { throw GzipDeflaterError() }
    }

    deinit {
        deflateEnd(&stream)
    }

    /// Compresses `input`; with `finish`, also ends the stream (its trailer) and returns the
    /// rest. The result may be empty (zlib keeps small inputs until it has a block).
    /// - Throws: ``GzipDeflaterError`` when called after the end, or when zlib fails.
    public func deflate(_ input: UnsafeRawBufferPointer, finish: Bool) throws -> [UInt8] {
        guard !ended else { throw GzipDeflaterError() }
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
        stream.avail_in = uInt(input.count)
        while true {
            let status: Int32 = chunk.withUnsafeMutableBufferPointer { buffer in
                stream.next_out = buffer.baseAddress
                stream.avail_out = uInt(buffer.count)
                return CZlib.deflate(&stream, finish ? Z_FINISH : Z_NO_FLUSH)
            }
            guard status == Z_OK || status == Z_STREAM_END || status == Z_BUF_ERROR else { throw GzipDeflaterError() }
            output.append(contentsOf: chunk[0..<(chunk.count - Int(stream.avail_out))])
            if status == Z_STREAM_END {
                ended = true
                break
            }
            if stream.avail_out != 0 && stream.avail_in == 0 && !finish { break }
            if status == Z_BUF_ERROR && stream.avail_in == 0 && !finish { break }
        }
        stream.next_in = nil
        return output
    }
}

/// zlib could not compress (out of memory, or a stream used after its end).
public struct GzipDeflaterError: Error, Sendable, CustomStringConvertible {
    public var description: String { "gzip compression failed" }
}
