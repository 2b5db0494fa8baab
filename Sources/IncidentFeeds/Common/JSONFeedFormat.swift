import Foundation
import IncidentCore
import IncidentJSON
import Synchronization

/// How one provider's JSON responses are read: the streaming `JSONRecordReader` with the
/// provider's record schema, and the mapping of each record to what the feed yields.
///
/// Records are parsed and mapped on a parser thread and handed to `body` on the calling thread
/// (``ParsePipeline``: parsing overlaps with storing, memory stays bounded by a few batches of
/// records). The envelope is judged by the caller from the returned summary, after the last
/// record: values that follow the records (Open511 `pagination`, a WZDx `feed_info` written
/// last) are known only then, and a caller that throws there makes the store discard what it
/// was given.
struct JSONFeedFormat: Sendable {
    let provider: String
    let schema: JSONRecordSchema
    /// One record to an incident or a rejection; runs on the parser thread.
    let map: @Sendable (JSONRecord) -> FeedRecord

    /// Reads a whole response file.
    /// - Returns: what the document held (envelope, counts per record path, repairs).
    /// - Throws: ``FeedError`` `malformedBody` (with the byte, line and column) for a document
    ///   that is not JSON or breaks a limit, `unreadableFile` when the file cannot be read; what
    ///   `body` throws.
    func read(file: URL, _ body: (FeedRecord) throws -> Void) throws -> JSONDocumentSummary {
        let result = Mutex<JSONDocumentSummary?>(nil)
        let (schema, map) = (schema, map)
        do {
            try ParsePipeline.run(produce: { emit in
                try withoutActuallyEscaping(emit) { emit in
                    let reader = JSONRecordReader(schema: schema) { record, _ in try emit(map(record)) }
                    let summary = try reader.parse(contentsOf: file)
                    result.withLock { $0 = summary }
                }
            }, consume: body)
        } catch let error as JSONParseError {
            if error.kind == .io {
                throw FeedError(.unreadableFile, provider: provider, message: error.message)
            }
            throw FeedError(.malformedBody, provider: provider,
                            message: "malformed JSON response at line \(error.line), column \(error.column) (byte \(error.offset)): \(error.message); nothing was stored")
        }
        guard let summary = result.withLock({ $0 }) else {
            throw FeedError(.malformedBody, provider: provider, message: "the JSON reader ended without a summary (internal error); nothing was stored")
        }
        return summary
    }
}

extension ResponseTally {
    /// Adds what a JSON document's summary says: the records read and the characters repaired.
    mutating func count(_ summary: JSONDocumentSummary) {
        recordsRead += summary.recordCount
        repairs += summary.repairs.total
    }
}

extension RejectedRecord {
    /// A JSON record set aside: its excerpt is the record as compact JSON (cut to
    /// ``maxExcerptBytes``, keys redacted).
    init(externalID: String?, position: String, reason: String, record: JSONValue) {
        // Only the head of a large record (a long geometry) is ever shown.
        var json = ""
        for scalar in record.description.unicodeScalars.prefix(Self.maxExcerptBytes) { json.unicodeScalars.append(scalar) }
        self.init(externalID: externalID, position: position, reason: reason, fields: [("record", json)])
    }
}
