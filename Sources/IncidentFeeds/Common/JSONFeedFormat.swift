import Foundation
import IncidentCore
import IncidentJSON
import IncidentXML

/// How one provider's JSON responses are read: the record and envelope paths, the DTO built
/// from each record, and the envelope inspection. The JSON counterpart of ``XMLFeedFormat``:
/// records stream out of the parser (yajl) as each one closes, in bounded memory.
///
/// JSON is UTF-8 (RFC 8259 §8.1): a body whose HTTP charset names another encoding is refused
/// with that reason rather than read as garbled text.
struct JSONFeedFormat<DTO>: Sendable {
    let provider: String
    let schema: JSONRecordSchema
    /// What stands for success in messages (`resultCode`).
    let successField: String
    let dto: @Sendable (JSONRecord) -> DTO
    /// Fills the tally from the envelope (the whole document's, or what preceded the first
    /// record); throws the typed error of an error envelope or of another document.
    let inspect: @Sendable (JSONEnvelope, inout ResponseTally) throws -> Void

    func read(file: URL, contentType: String?, map: (DTO) -> FeedRecord, _ body: (FeedRecord) throws -> Void) throws -> ResponseVerdict {
        if let charset = XMLRecordReader.charset(inContentType: contentType), !["utf-8", "utf8", "us-ascii"].contains(charset.lowercased()) {
            throw FeedError(.unexpectedResponse, provider: provider,
                            message: "the JSON response says it is in \(charset); JSON must be UTF-8 (RFC 8259 §8.1): nothing was stored")
        }
        var tally = ResponseTally(successField: successField)
        let summary: JSONDocumentSummary
        do {
            // The reader keeps its callback only for this call.
            summary = try withoutActuallyEscaping(map) { map in
                try withoutActuallyEscaping(body) { body in
                    try JSONRecordReader(schema: schema) { record, envelope in
                        if tally.recordsRead == 0 {
                            // An error envelope that precedes the records stops the parse at once.
                            var early = ResponseTally(successField: "")
                            try inspect(envelope, &early)
                        }
                        tally.recordsRead += 1
                        try body(map(dto(record)))
                    }.parse(contentsOf: file)
                }
            }
        } catch let error as JSONParseError {
            throw FeedError(.malformedBody, provider: provider,
                            message: "malformed JSON response at line \(error.line), column \(error.column): \(error.message); nothing was stored")
        }
        tally.repairs = summary.repairs.total
        tally.incompleteBecause += summary.envelope.problems
        try inspect(summary.envelope, &tally)
        try tally.requireAnswer(provider: provider, message: tally.envelopeMessage)
        return tally.verdict
    }
}
