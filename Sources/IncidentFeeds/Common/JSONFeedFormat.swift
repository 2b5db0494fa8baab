import Foundation
import IncidentCore
import IncidentJSON
import IncidentXML

/// How one provider's JSON responses are read: the record and envelope paths, the DTO built
/// from each record, and the envelope inspection. The JSON counterpart of ``XMLFeedFormat``:
/// records stream out of the parser (yajl) as each one closes, in bounded memory, and as on the
/// XML path the parser and the DTOs run on their own thread (``ParsePipeline``) while records are
/// mapped and stored (a 100 MB WZDx feed: the parser thread is busy 1.5 s, the storing one 0.7 s).
///
/// JSON is UTF-8 (RFC 8259 §8.1): a body whose HTTP charset names another encoding is refused
/// with that reason rather than read as garbled text.
struct JSONFeedFormat<DTO: Sendable>: Sendable {
    let provider: String
    let schema: JSONRecordSchema
    /// What stands for success in messages (`resultCode`).
    let successField: String
    let dto: @Sendable (JSONRecord) -> DTO
    /// Fills the tally from the envelope (the whole document's, or what preceded the first
    /// record); throws the typed error of an error envelope or of another document.
    let inspect: @Sendable (JSONEnvelope, inout ResponseTally) throws -> Void
    /// Judges, once the document was read, which record lists it held: how often the value
    /// holding each record path's records was found (`JSONDocumentSummary.recordPathsFound`),
    /// so that a document without its list (`events`, `features`) is refused rather than read
    /// as empty. Nil: the envelope alone decides.
    var inspectRecordLists: (@Sendable ([Int], inout ResponseTally) throws -> Void)? = nil

    func read(file: URL, contentType: String?, map: (DTO) -> FeedRecord, _ body: (FeedRecord) throws -> Void) throws -> ResponseVerdict {
        if let charset = XMLRecordReader.charset(inContentType: contentType), !["utf-8", "utf8", "us-ascii"].contains(charset.lowercased()) {
            throw FeedError(.unexpectedResponse, provider: provider,
                            message: "the JSON response says it is in \(charset); JSON must be UTF-8 (RFC 8259 §8.1): nothing was stored")
        }
        let end = EndOfDocument()
        let (schema, dto, provider, inspect) = (self.schema, self.dto, self.provider, self.inspect)
        var tally = ResponseTally(successField: successField)
        try ParsePipeline.run(produce: { emit in
            // The reader keeps its callback only for this call.
            try withoutActuallyEscaping(emit) { emit in
                var checked = false
                let reader = JSONRecordReader(schema: schema) { record, envelope in
                    if !checked {
                        // An error envelope that precedes the records stops the parse at once.
                        var early = ResponseTally(successField: "")
                        try inspect(envelope, &early)
                        checked = true
                    }
                    try emit(dto(record))
                }
                do {
                    end.set(try reader.parse(contentsOf: file))
                } catch let error as JSONParseError {
                    throw FeedError(.malformedBody, provider: provider,
                                    message: "malformed JSON response at line \(error.line), column \(error.column): \(error.message); nothing was stored")
                }
            }
        }, consume: { dto in
            tally.recordsRead += 1
            try body(map(dto))
        })
        guard let summary = end.get() else {
            throw FeedError(.malformedBody, provider: provider, message: "the JSON reader ended without a summary (internal error); nothing was stored")
        }
        tally.repairs = summary.repairs.total
        tally.incompleteBecause += summary.envelope.problems
        try inspect(summary.envelope, &tally)
        try inspectRecordLists?(summary.recordPathsFound, &tally)
        try tally.requireAnswer(provider: provider, message: tally.envelopeMessage)
        return tally.verdict
    }

    /// The summary as the parser thread left it.
    private final class EndOfDocument: @unchecked Sendable {  // written once by the parser, read after it finished
        private var summary: JSONDocumentSummary?
        func set(_ summary: JSONDocumentSummary) { self.summary = summary }
        func get() -> JSONDocumentSummary? { summary }
    }
}
