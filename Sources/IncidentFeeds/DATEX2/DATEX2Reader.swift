import Foundation
import IncidentCore
import IncidentXML

/// Reads one DATEX II document, streaming: each `situationRecord` is passed on as soon as it
/// ends, as a ``DATEX2Record`` or mapped by ``DATEX2Mapper``; ``finish()`` gives the verdict on
/// the document.
///
/// An answer is a SituationPublication payload: 2.x `d2LogicalModel/payloadPublication`, 3.x
/// `d2:payload` or `mc:payload` (in a `mc:messageContainer`, or a stateful push
/// `putDataInput`), each with `xsi:type` SituationPublication, plain or inside a SOAP
/// envelope (wrappers need not be named: elements of other namespaces around the payload
/// are transparent). That payload's presence is this provider's success code: it is checked
/// before the first record is passed on and again at the end. Anything else is not an answer
/// and throws ``FeedError``: a SOAP Fault (`apiError`, with its code and text), a 2.x
/// exchange with a `denyReason` and no payload (`apiError`), another publication type
/// (`MeasuredDataPublication`, …) or another document (`unexpectedResponse`), malformed XML
/// (`malformedBody`). A SituationPublication with no situation is a complete, empty answer.
///
/// Completeness: a publication lists every active situation only when it is a snapshot.
/// 2.x: `exchange/subscription/updateMethod` is `snapshot`, or there is no subscription (a
/// pull). 3.x: a `d2:payload` document (a pull), or `ex:codedExchangeProtocol` `snapshotPull`
/// or `snapshotPush`. A push update (2.x `allElementUpdate`/`singleElementUpdate`, 3.x
/// `simplePush`/`statefulPush`, or a message container that names no protocol) lists only what
/// changed: its verdict is incomplete, so it clears nothing (facts: DATEX II 2.2.3
/// `UpdateMethodEnum`, 3.x `ProtocolTypeEnum` and Exchange 2020 `statefulPush`, the NDW push
/// samples). An envelope value given twice (two payloads in one container) makes it
/// incomplete too.
final class DATEX2DocumentReader {
    /// One record as read, with its publication's time (nil when absent or unreadable).
    struct Read: Sendable {
        var record: DATEX2Record
        var publicationTime: UTCInstant?
        /// The record's size as the XML reader counted it (`XMLRecord.byteCount`).
        var weight = 0
    }

    /// The zone of the publication time, when it has no offset.
    let timeZone: ProviderTimeZone
    private let emit: (Read) throws -> Void
    private var tally = ResponseTally(successField: "SituationPublication payload")
    private var payloadChecked = false
    /// The publication's time and language, read once (they precede the situations).
    private var publication: (time: UTCInstant?, language: String?)?
    private lazy var reader = XMLRecordReader(schema: DATEX2Schema.schema) { [unowned self] record, envelope in
        try self.handle(record, envelope)
    }

    typealias E = DATEX2Schema.Envelope

    /// A reader that passes each record as read, unmapped (the caller maps it, e.g. on
    /// another thread).
    init(timeZone: ProviderTimeZone, records emit: @escaping (Read) throws -> Void) {
        self.timeZone = timeZone
        self.emit = emit
    }

    /// A reader that maps each record with `settings` for `source` and passes the result.
    convenience init(settings: DATEX2Mapper.Settings, source: String, _ emit: @escaping (FeedRecord) throws -> Void) {
        self.init(timeZone: settings.timeZone) { read in
            try emit(DATEX2Mapper.map(read.record, publicationTime: read.publicationTime, settings: settings, source: source))
        }
    }

    /// Reads `file`, then finishes. `charset` is the HTTP charset, used when the document
    /// declares none.
    /// - Throws: ``FeedError`` (see the type's documentation), or what `emit` throws.
    func read(file: URL, charset: String?) throws -> ResponseVerdict {
        reader.charset = charset
        try BodyFile.chunks(file, provider: DATEX2Provider.name) { try parse($0) }
        return try finish()
    }

    /// Reads the next chunk of the document (any size, split anywhere).
    func parse(_ chunk: UnsafeRawBufferPointer) throws {
        try translatingParseErrors { try reader.parse(chunk) }
    }

    /// Ends the document and returns the verdict.
    func finish() throws -> ResponseVerdict {
        try translatingParseErrors { try reader.finish() }
        return try verdict()
    }

    /// Forgets the document read so far, to read another with the same (compiled) schema.
    func reset() {
        reader.reset()
        tally = ResponseTally(successField: tally.successField)
        payloadChecked = false
        publication = nil
    }

    private func translatingParseErrors(_ body: () throws -> Void) throws {
        do {
            try body()
        } catch let error as XMLParseError {
            throw FeedError(malformed: error, format: "XML", provider: DATEX2Provider.name)
        }
    }

    private func handle(_ record: XMLRecord, _ envelope: XMLEnvelope) throws {
        if !payloadChecked {
            try checkPayload(envelope, atEnd: false)
            payloadChecked = true
        }
        let publication = self.publication ?? publicationContext(envelope)
        self.publication = publication
        tally.recordsRead += 1
        try emit(Read(record: DATEX2Record(record, defaultLanguage: publication.language), publicationTime: publication.time,
                      weight: record.byteCount))
    }

    private func publicationContext(_ envelope: XMLEnvelope) -> (time: UTCInstant?, language: String?) {
        let time = (envelope[E.v2PublicationTime.rawValue] ?? envelope[E.v3PublicationTime.rawValue])
            .flatMap { timeZone.instant(iso8601: $0) }
        let language = [E.v2Payload, .d2Payload, .containerPayload].lazy
            .compactMap { envelope.attributes[$0.rawValue].dropFirst().first.flatMap { $0 } }.first
        return (time, language)
    }

    /// The payload's resolved `xsi:type` and which element carried it.
    private static func payload(_ envelope: XMLEnvelope) -> (element: E, kind: String?)? {
        for element in [E.v2Payload, .d2Payload, .containerPayload] {
            let attributes = envelope.attributes[element.rawValue]
            // The element was seen when any of its attributes was read.
            if let kind = attributes.first.flatMap({ $0 }) { return (element, kind) }
            if attributes.dropFirst().first.flatMap({ $0 }) != nil { return (element, nil) }
        }
        return nil
    }

    /// Throws unless the document is a SituationPublication (see the type's documentation).
    private func checkPayload(_ envelope: XMLEnvelope, atEnd: Bool) throws {
        let provider = DATEX2Provider.name
        if atEnd, let fault = envelope[E.soap11FaultString.rawValue] ?? envelope[E.soap12FaultReason.rawValue] {
            let code = envelope[E.soap11FaultCode.rawValue] ?? envelope[E.soap12FaultCode.rawValue]
            throw FeedError(.apiError, provider: provider, code: code,
                            message: "the server answered with a SOAP Fault\(code.map { " (\($0))" } ?? ""): \(fault); nothing was stored")
        }
        guard let payload = Self.payload(envelope) else {
            // Two payloads make the payload fields ambiguous (nil); the first was checked.
            if payloadChecked { return }
            if atEnd, let reason = envelope[E.denyReason.rawValue] {
                throw FeedError(.apiError, provider: provider, code: reason,
                                message: "the DATEX II exchange refused the request (denyReason \(reason)) and sent no publication; nothing was stored")
            }
            let root = envelope.rootElement.map(Self.describe) ?? "none"
            let what = atEnd ? "holds no payload publication" : "has a situationRecord outside a payload publication"
            throw FeedError(.unexpectedResponse, provider: provider,
                            message: "expected a DATEX II SituationPublication (d2LogicalModel, d2:payload or mc:messageContainer, "
                                + "plain or in SOAP) but the document (root element <\(root)>) \(what)\(Self.namespaceNote(envelope.rootElement)); check the base URL")
        }
        guard let kind = payload.kind, DATEX2Mapper.datexLocalName(kind) == "SituationPublication" else {
            throw FeedError(.unexpectedResponse, provider: provider,
                            message: "the DATEX II payload is \(payload.kind.map { "a \(DATEX2Mapper.providerCategory($0))" } ?? "of no xsi:type"), "
                                + "not a SituationPublication; check the base URL (it must serve situations)")
        }
    }

    private func verdict() throws -> ResponseVerdict {
        let envelope = reader.envelope
        try checkPayload(envelope, atEnd: true)
        tally.confirmedSuccess = true
        tally.repairs = reader.repairs
        // The payload's publicationTime (DATEX II 2.x PayloadPublication, 3.x com:publicationTime).
        tally.publishedAt = publicationContext(envelope).time
        tally.incompleteBecause += envelope.problems.map { "the publication's envelope is ambiguous (\($0)), so it may not list every active situation" }
        switch Self.payload(envelope)?.element {
        case .v2Payload?:
            if let method = envelope[E.updateMethod.rawValue], method != "snapshot" {
                tally.incompleteBecause.append("the publication is a push update (updateMethod \(method)): it lists only the situations that changed, so it clears nothing")
            }
        case .containerPayload?:
            switch envelope[E.exchangeProtocol.rawValue] {
            case "snapshotPull"?, "snapshotPush"?:
                break
            case let protocolName?:
                tally.incompleteBecause.append("the message is a push update (codedExchangeProtocol \(protocolName)): it lists only the situations that changed, so it clears nothing")
            case nil:
                tally.incompleteBecause.append("the message container names no exchange protocol (ex:codedExchangeProtocol), so it cannot be told from a push update; it clears nothing")
            }
        case .d2Payload?, nil:
            break
        default:
            break
        }
        return tally.verdict
    }

    /// For a root element in a namespace that is not DATEX II's (by URI, or by the
    /// `/schema/3/<module>` form of ``DATEX2Schema/namespaceAliases``): says so.
    static func namespaceNote(_ root: XMLName?) -> String {
        guard let uri = root?.namespaceURI else { return ": the root element is in no namespace, and DATEX II's elements all are" }
        let known = [DATEX2Namespace.v2, DATEX2Namespace.d2Payload, DATEX2Namespace.messageContainer,
                     DATEX2Namespace.soap11, DATEX2Namespace.soap12]
        if known.contains(uri) || DATEX2Schema.namespaceAliases.contains(where: { uri.hasSuffix($0.suffix) }) { return "" }
        return ": its namespace \(uri) is not a DATEX II namespace (http://datex2.eu/schema/2/2_0, http://datex2.eu/schema/3/…, or another URI ending in /schema/3/d2Payload)"
    }

    static func describe(_ name: XMLName) -> String {
        name.namespaceURI.map { "\(name.localName) in \($0)" } ?? name.localName
    }
}
