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
    var inspectRecordLists: (@Sendable (JSONDocumentSummary, inout ResponseTally) throws -> Void)? = nil

    func read(file: URL, contentType: String?, map: @escaping @Sendable (DTO) -> FeedRecord, _ body: (FeedRecord) throws -> Void) throws -> ResponseVerdict {
        if let charset = XMLRecordReader.charset(inContentType: contentType), !["utf-8", "utf8", "us-ascii"].contains(charset.lowercased()) {
            throw FeedError(.unexpectedResponse, provider: provider,
                            message: "the JSON response says it is in \(charset); JSON must be UTF-8 (RFC 8259 §8.1): nothing was stored")
        }
        let schema = self.schema
        let provider = self.provider
        var tally = ResponseTally(successField: successField)
        let summary = try ParsePipeline.readDocument(
            format: "JSON", provider: provider, tally: &tally, dto: dto, weight: { $0.byteCount }, inspect: inspect,
            parse: { onRecord in
                let reader = JSONRecordReader(schema: schema, onRecord: onRecord)
                try BodyFile.chunks(file, provider: provider) { try reader.parse($0) }
                return try reader.finish()
            },
            map: map, mapWhileReading: false, body: body)
        tally.repairs = summary.repairs.total
        if summary.repairs.invalidUTF8 > 0 {
            // Bytes that are not UTF-8 (a response in CP949, say) may sit in ids: records are
            // kept with U+FFFD in their place, but such a response cannot say what is active.
            tally.incompleteBecause.append("\(summary.repairs.invalidUTF8) byte sequence(s) were not UTF-8 (is the response in another encoding, such as CP949?), so ids may be garbled and nothing is cleared")
        }
        tally.incompleteBecause += summary.envelope.problems
        try inspect(summary.envelope, &tally)
        try inspectRecordLists?(summary, &tally)
        try tally.requireAnswer(provider: provider, message: tally.envelopeMessage)
        return tally.verdict
    }
}
