import Foundation
import IncidentCore
import IncidentXML

/// How one provider's XML responses are read: the record schema, the wire-shaped DTO built from
/// each record, and the envelope inspection (the expected root element, the provider's result
/// code, the data.go.kr gateway's document, the declared record count).
///
/// Reading streams: the parser and the mapping run on their own thread (``ParsePipeline``)
/// while records are stored. Each record becomes what `map` makes of it (an incident, or a record set
/// aside); the envelope is inspected once the document has been read, and with the records
/// read and the characters repaired it gives the response's verdict. A document with neither a
/// success code nor any record is an error, never "no incidents".
struct XMLFeedFormat<DTO: Sendable>: Sendable {
    let provider: String
    let schema: XMLRecordSchema
    /// What stands for success in messages (`headerCd 0`, `resultCode`).
    let successField: String
    let dto: @Sendable (XMLRecord) -> DTO
    /// Fills the tally from the envelope (success seen, declared count); throws the typed
    /// error of an error envelope or of another document.
    let inspect: @Sendable (XMLEnvelope, inout ResponseTally) throws -> Void

    /// Reads a whole response file.
    /// - Parameter contentType: the HTTP Content-Type; its charset is used when the document
    ///   declares no encoding of its own.
    /// - Throws: ``FeedError`` (the envelope's errors, `malformedBody` with line and column), or
    ///   what `body` throws.
    func read(file: URL, contentType: String?, map: @escaping @Sendable (DTO) -> FeedRecord, _ body: (FeedRecord) throws -> Void) throws -> ResponseVerdict {
        let charset = XMLRecordReader.charset(inContentType: contentType)
        let schema = self.schema
        let provider = self.provider
        var tally = ResponseTally(successField: successField)
        let (envelope, repairs) = try ParsePipeline.readDocument(
            format: "XML", provider: provider, tally: &tally, dto: dto, weight: { $0.byteCount }, inspect: inspect,
            parse: { onRecord in
                let reader = XMLRecordReader(schema: schema, onRecord: onRecord)
                reader.charset = charset
                try BodyFile.chunks(file, provider: provider) { try reader.parse($0) }
                try reader.finish()
                return (reader.envelope, reader.repairs)
            },
            map: map, mapWhileReading: true, body: body)
        tally.repairs = repairs
        tally.incompleteBecause += envelope.problems
        try inspect(envelope, &tally)
        try tally.requireAnswer(provider: provider, message: tally.envelopeMessage)
        return tally.verdict
    }
}

extension ResponseTally {
    /// A response with neither a success code nor any record says nothing: an error, never
    /// "no incidents" (an empty `<response/>`, a header whose code is empty).
    func requireAnswer(provider: String, message: String?) throws {
        guard confirmedSuccess || recordsRead > 0 else {
            throw FeedError(.unexpectedResponse, provider: provider,
                            message: "the response has no \(successField) and no records\(message.map { " (its message: \($0))" } ?? ""), so it cannot say there are no incidents; nothing was stored")
        }
    }
}
