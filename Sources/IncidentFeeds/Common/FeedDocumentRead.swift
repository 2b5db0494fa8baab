import Foundation
import IncidentCore
import IncidentJSON
import IncidentXML

/// A record reader's error that says where in the document it stopped: 1-based `line` and
/// `column` (0 when unknown) and a one-line `message` that quotes no value of the document.
protocol DocumentParseError: Error {
    var line: Int { get }
    var column: Int { get }
    var message: String { get }
    /// The document ended before its root value or element did (a transfer cut short, a
    /// partial file).
    var isTruncated: Bool { get }
    /// The document may be valid but passed one of the reader's limits (depth, one text or
    /// value, one envelope value, markup, entity expansion): it is not called malformed.
    var isLimit: Bool { get }
}

extension XMLParseError: DocumentParseError {
    var isTruncated: Bool { kind == .truncated }
    var isLimit: Bool { [.textTooLarge, .tooDeep, .markupTooLarge, .entityExpansion].contains(kind) }
}
extension JSONParseError: DocumentParseError {
    var isTruncated: Bool { kind == .truncated }
    var isLimit: Bool { [.tooDeep, .stringTooLarge, .numberTooLarge, .recordTooLarge].contains(kind) }
}

extension ParsePipeline {
    /// Reads one response document of a record format, the part ``XMLFeedFormat`` and
    /// ``JSONFeedFormat`` share: `parse` (the reader) and `dto` run on the reading thread, each
    /// record is counted in `tally.recordsRead` and handed to `body` on this one; `map` runs on
    /// the reading thread when `mapWhileReading`, else on this one.
    ///
    /// Where to map is the format's choice, by which thread waits: for a GITS XML feed the
    /// reader keeps its thread busy 8 % of the time while the store's thread is the bottleneck,
    /// so the XML formats map while reading (times, road names, categories; issue 23); the
    /// JSON reader is the busier thread (a 100 MB WZDx feed: 1.5 s against the store's 0.7 s),
    /// so the JSON formats map on the storing thread.
    ///
    /// The envelope is inspected when the first record arrives (into a scratch tally): the
    /// header precedes the records, so an error envelope or another document stops the parse
    /// at once. The caller inspects the complete envelope afterwards into `tally`.
    ///
    /// - Parameters:
    ///   - format: `XML` or `JSON`, for messages.
    ///   - weight: the record's size as its reader counted it (`byteCount`), for ``run``.
    ///   - parse: makes the reader with the record callback it is given, reads the whole
    ///     document, and returns what the caller needs of its end (envelope, repairs).
    /// - Returns: what `parse` returned.
    /// - Throws: ``FeedError`` `malformedBody` with the line and column of a parse error;
    ///   what `inspect` and `body` throw.
    static func readDocument<Record, Envelope, DTO: Sendable, End: Sendable>(
        format: String, provider: String, tally: inout ResponseTally,
        dto: @escaping @Sendable (Record) -> DTO, weight: @escaping @Sendable (Record) -> Int,
        inspect: @escaping @Sendable (Envelope, inout ResponseTally) throws -> Void,
        parse: @escaping @Sendable (_ onRecord: @escaping (Record, Envelope) throws -> Void) throws -> End,
        map: @escaping @Sendable (DTO) -> FeedRecord, mapWhileReading: Bool, body: (FeedRecord) throws -> Void
    ) throws -> End {
        let end = DocumentEnd<End>()
        try run(weight: { $0.weight }, produce: { (emit: (Weighed<Read<DTO>>) throws -> Void) in
            // The reader keeps its callback only for this call.
            try withoutActuallyEscaping(emit) { emit in
                var checked = false
                do {
                    end.set(try parse { record, envelope in
                        if !checked {
                            var early = ResponseTally(successField: "")
                            try inspect(envelope, &early)
                            checked = true
                        }
                        let read: Read<DTO> = mapWhileReading ? .mapped(map(dto(record))) : .unmapped(dto(record))
                        try emit(Weighed(value: read, weight: weight(record)))
                    })
                } catch let error as any DocumentParseError {
                    throw FeedError(malformed: error, format: format, provider: provider)
                }
            }
        }, consume: { read in
            tally.recordsRead += 1
            switch read.value {
            case .mapped(let record): try body(record)
            case .unmapped(let dto): try body(map(dto))
            }
        })
        guard let value = end.get() else {
            throw FeedError(.malformedBody, provider: provider, message: "the \(format) reader ended without a summary (internal error); nothing was stored")
        }
        return value
    }

    /// A record as the reading thread hands it over: mapped, or its DTO for the storing thread to map.
    enum Read<DTO: Sendable>: Sendable {
        case mapped(FeedRecord)
        case unmapped(DTO)
    }

    /// A record with the size its reader counted for it (``run`` closes batches by it).
    struct Weighed<Value: Sendable>: Sendable {
        var value: Value
        var weight: Int
    }

    /// What the reading thread left at the end of the document.
    private final class DocumentEnd<Value: Sendable>: @unchecked Sendable {  // written once by the parser, read after it finished
        private var value: Value?
        func set(_ value: Value) { self.value = value }
        func get() -> Value? { value }
    }
}

extension FeedError {
    /// `malformedBody` for a reader's parse error: `malformed XML response at line 3, column 7:
    /// …; nothing was stored`, `truncated …` when the document was cut off before its end, or
    /// `… response over a reader limit …` when it passed a limit (it may be valid).
    init(malformed error: any DocumentParseError, format: String, provider: String) {
        let what = error.isTruncated ? "truncated \(format) response (cut off before its end)"
            : error.isLimit ? "\(format) response over a limit of the reader" : "malformed \(format) response"
        self.init(.malformedBody, provider: provider,
                  message: "\(what) at line \(error.line), column \(error.column): \(error.message); nothing was stored")
    }
}
