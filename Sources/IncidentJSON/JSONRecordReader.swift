#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A streaming, bounded-memory JSON record reader over yajl 2.1's push parser.
///
/// Configure it with a `JSONRecordSchema`; feed the document in chunks of any size, split
/// anywhere (inside a string, a UTF-8 sequence, an escape or a number), with `parse`, then call
/// `finish()`. `onRecord` receives each record as a `JSONValue` tree as soon as the record's
/// value closes, numbered from 1 in document order, with the envelope read so far; `finish()`
/// returns the complete envelope (values after the records too, such as Open511 `pagination`)
/// and the counts. Memory is bounded by one record and `limits`, not by the document, which
/// may be of any size: parts no path enters are skipped without being kept.
///
/// Input (RFC 8259): UTF-8, one JSON value, no comments, nothing after the value. A UTF-8 byte
/// order mark at the start is skipped (RFC 8259 §8.1 allows that). Repaired instead of rejected,
/// and counted in `JSONDocumentSummary.repairs` (a product decision): raw control characters
/// inside strings (read as if escaped), ill-formed UTF-8 inside strings (each maximal subpart
/// becomes U+FFFD) and unpaired surrogate escapes (U+FFFD). Everything else that is not JSON
/// is rejected with a `JSONParseError` naming the cause and its byte offset, line and column.
///
/// Limits (defaults): nesting depth 256, one string or key 1 MiB, one number 1 KiB, one record
/// or envelope value 32 MiB (a larger record is delivered marked oversized, for the caller to set
/// aside); see `JSONLimits`. Duplicate keys are kept and reported, never
/// resolved silently (`JSONRecord.problems`, `JSONEnvelope.problems`).
///
/// Errors: `parse`, `finish` and `parse(contentsOf:)` throw `JSONParseError`, and rethrow
/// whatever `onRecord` throws unchanged (same type and value). After any error the reader
/// refuses input (`.inputRefused`) until `reset()`. Records delivered before an error stay
/// delivered: roll back in the caller.
///
/// Not thread-safe: use one reader from one thread at a time. Sources: yajl 2.1.0 API
/// (yajl_parse.h: `yajl_alloc`, `yajl_config`, `yajl_parse`, `yajl_complete_parse`,
/// `yajl_get_error`, `yajl_get_bytes_consumed`), RFC 8259 (The JSON Data Interchange Format).
public final class JSONRecordReader {
    /// What this reader extracts.
    public let schema: JSONRecordSchema
    /// The limits enforced on every document.
    public let limits: JSONLimits

    private let extractor: RecordExtractor
    private let parser: YAJLPushParser
    private var phase = Phase.reading
    private var insideParse = false

    private enum Phase { case reading, finished, failed }

    /// Creates a reader. `onRecord` is called on the calling thread, from inside `parse` or
    /// `finish`, once per record, in document order; what it throws stops the parse and comes
    /// out of that call unchanged.
    public init(
        schema: JSONRecordSchema,
        limits: JSONLimits = .default,
        onRecord: @escaping (JSONRecord, JSONEnvelope) throws -> Void
    ) {
        self.schema = schema
        self.limits = limits
        extractor = RecordExtractor(schema: schema, limits: limits, onRecord: onRecord)
        parser = YAJLPushParser(callbacks: RecordExtractor.callbacks, context: extractor.context, limits: limits)
    }

    /// The envelope read so far (values seen so far; nil until seen).
    public var envelope: JSONEnvelope { extractor.envelope }

    /// Parses the next chunk of the document: any size, split anywhere. Records completed by
    /// this chunk are delivered before it returns.
    ///
    /// - Throws: `JSONParseError`, or what `onRecord` threw (unchanged).
    public func parse(_ chunk: UnsafeRawBufferPointer) throws {
        try acceptInput()
        try run { () throws(YAJLStop) in try parser.parse(chunk) }
    }

    /// Parses the next chunk of the document; see `parse(_: UnsafeRawBufferPointer)`.
    public func parse(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try parse($0) }
    }

    /// Parses the next chunk of the document; see `parse(_: UnsafeRawBufferPointer)`.
    public func parse(_ data: Data) throws {
        try data.withUnsafeBytes { try parse($0) }
    }

    /// Ends the document and returns what it held.
    ///
    /// - Throws: `JSONParseError` `.truncated` when the document is empty or ends inside its
    ///   value; other kinds as for `parse`; what `onRecord` threw, unchanged.
    @discardableResult
    public func finish() throws -> JSONDocumentSummary {
        try acceptInput()
        try run { () throws(YAJLStop) in try parser.finish() }
        phase = .finished
        return JSONDocumentSummary(
            envelope: extractor.envelope,
            recordCount: extractor.recordCount,
            recordCounts: extractor.recordCounts,
            recordPathsFound: extractor.recordPathsFound,
            recordListsAsArrays: extractor.recordListsAsArrays,
            repairs: parser.filter.repairs,
            byteOrderMark: parser.filter.byteOrderMark,
            byteCount: parser.filter.consumed)
    }

    /// Reads the file at `file` in chunks of `chunkSize` bytes (default 256 KiB), then calls
    /// `finish()`.
    ///
    /// - Throws: `JSONParseError` `.io` when the file cannot be opened or read; otherwise as
    ///   `parse` and `finish`.
    @discardableResult
    public func parse(contentsOf file: URL, chunkSize: Int = 256 * 1024) throws -> JSONDocumentSummary {
        try acceptInput()
        let path = file.path
        let fd = open(path, O_RDONLY)
        if fd < 0 { throw ioError("cannot open \(path)") }
        defer { close(fd) }
        // The same loop as XMLRecordReader.parse(contentsOf:charset:chunkSize:) plus `phase = .failed`; the targets share no dependency.
        let size = max(1, chunkSize)
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let n = read(fd, buffer, size)
            if n < 0 {
                if errno == EINTR { continue }
                phase = .failed
                throw ioError("cannot read \(path)")
            }
            if n == 0 { break }
            try parse(UnsafeRawBufferPointer(start: buffer, count: n))
        }
        return try finish()
    }

    /// Forgets the current document (finished, failed or half-read) so the reader can read a
    /// new one.
    ///
    /// Must not be called from inside `onRecord` (a programming error that traps): throw from
    /// `onRecord` to stop instead.
    public func reset() {
        precondition(!insideParse, "JSONRecordReader.reset() called from inside onRecord")
        parser.reset()
        extractor.reset()
        phase = .reading
    }

    // MARK: - Private

    private func acceptInput() throws {
        if insideParse {
            throw JSONParseError(kind: .inputRefused, message: "parse or finish called from inside onRecord")
        }
        switch phase {
        case .reading: return
        case .failed:
            throw JSONParseError(kind: .inputRefused, message: "the reader stopped at an earlier error; call reset() to read another document")
        case .finished:
            throw JSONParseError(kind: .inputRefused, message: "the document was finished; call reset() to read another document")
        }
    }

    /// Runs the parser, turning a stop into the error the caller sees.
    private func run(_ body: () throws(YAJLStop) -> Void) throws {
        insideParse = true
        defer { insideParse = false }
        do {
            try body()
        } catch {
            phase = .failed
            switch error {
            case .error(let parseError):
                throw parseError
            case .canceled(let offset, let line, let column):
                switch extractor.failure {
                case .thrown(let thrown)?:
                    throw thrown
                case .limit(let kind, let message)?:
                    throw JSONParseError(kind: kind, offset: offset, line: line, column: column, message: message)
                case nil:
                    throw JSONParseError(kind: .malformed, offset: offset, line: line, column: column, message: "the parse stopped without a reason (internal error)")
                }
            }
        }
    }

    private func ioError(_ what: String) -> JSONParseError {
        let reason = String(cString: strerror(errno))
        return JSONParseError(kind: .io, message: "\(what): \(reason)")
    }
}
