import Foundation
import IncidentXML

/// How one provider's XML responses are read: the record schema, the wire-shaped DTO built
/// from each record, and the envelope check (the provider's result code, the data.go.kr
/// gateway's error document, the expected root element).
///
/// The envelope is checked before the first record is passed on (the header precedes the
/// records in every provider's document) and again at the end (a document with no records).
struct XMLFeedFormat<DTO>: Sendable {
    let provider: String
    let schema: XMLRecordSchema
    let dto: @Sendable (XMLRecord) -> DTO
    /// Throws the provider's typed error for an error envelope or an unexpected document.
    let checkEnvelope: @Sendable (_ envelope: XMLEnvelope, _ atEnd: Bool) throws -> Void

    /// A reader that checks the envelope and passes each record's DTO to `body`. Feed it
    /// chunks, then call `finish()`.
    func makeReader(_ body: @escaping (DTO) throws -> Void) -> XMLRecordReader {
        var checked = false
        return XMLRecordReader(schema: schema) { record, envelope in
            if !checked {
                try checkEnvelope(envelope, false)
                checked = true
            }
            try body(dto(record))
        }
    }

    /// Reads a whole response file, streaming.
    /// - Throws: ``FeedError`` (the envelope's errors, `malformedBody` with line and column),
    ///   or what `body` throws.
    func read(file: URL, _ body: (DTO) throws -> Void) throws {
        // The reader keeps its callback only for this call.
        try withoutActuallyEscaping(body) { body in
            let reader = makeReader(body)
            do {
                try reader.parse(contentsOf: file)
            } catch let error as XMLParseError {
                throw FeedError(.malformedBody, provider: provider,
                                message: "malformed XML response at line \(error.line), column \(error.column): \(error.message); nothing was stored")
            }
            try checkEnvelope(reader.envelope, true)
        }
    }
}
