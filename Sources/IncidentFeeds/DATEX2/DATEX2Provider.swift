import Foundation
import IncidentCore
import IncidentNetworking
import IncidentXML

/// DATEX II situation publications (`"provider": "datex2"`): versions 2.x (`d2LogicalModel`)
/// and 3.x (`d2:payload`, `mc:messageContainer`), plain or in SOAP, pulled over HTTP or
/// replayed from files (push messages received by another program).
///
/// Each `situationRecord` becomes one incident (``DATEX2Mapper``: ids, times, categories,
/// text, geometry); ``DATEX2DocumentReader`` says what is an answer and when it is complete
/// (snapshots clear, push updates do not). Reading runs on one thread while mapping and the
/// store's writes run on the caller's (``ParsePipeline``).
public enum DATEX2Provider: FeedProvider {
    public static let name = "datex2"
    /// A publication is usually public; a server that wants a key names its `keyParameter`.
    public static let requiresKey = false

    /// `language`: the comment language shown first.
    public static let language = ProviderOption<String>(
        "language", default: "",
        help: "the `generalPublicComment` language shown first in descriptions (`fi`, `en`); empty: every language in the publication's order",
        accepted: "a language code or empty") { code in
            code.isEmpty || isLanguageCode(code) ? nil : "must be a language code such as fi, en or nl-BE, or empty"
        }
    /// `timeZone`: for times written without an offset.
    public static let timeZone = ProviderTimeZone.option(
        help: "the IANA zone of times written without a UTC offset (DATEX II times normally carry one)")
    /// `keyParameter`: where the key goes, for servers that want one.
    public static let keyParameter = ProviderOption<String>(
        "keyParameter", default: "",
        help: "the query parameter that carries the source's key, for servers that want one; empty: no key is sent",
        accepted: "a query parameter name or empty") { name in
            name.isEmpty || name.allSatisfy({ $0.isLetter || $0.isNumber || "-_.~".contains($0) }) ? nil
                : "must be a query parameter name (letters, digits, - _ . ~), or empty"
        }

    public static let options: [any ProviderOptionDeclaration] = [language, timeZone, keyParameter]
    /// None known in advance: the configured `keyParameter` is registered with `Redaction`
    /// when the request is built, and the key itself is a registered secret from the start.
    public static let keyParameterNames: [String] = []

    /// `fi`, `en`, `nl-BE`: BCP 47 shaped (a 2–3 letter language, then subtags).
    static func isLanguageCode(_ code: String) -> Bool {
        let parts = code.split(separator: "-", omittingEmptySubsequences: false)
        guard let first = parts.first, (2...3).contains(first.count), first.allSatisfy({ $0.isASCII && $0.isLetter }) else { return false }
        return parts.dropFirst().allSatisfy { (1...8).contains($0.count) && $0.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) } }
    }

    /// - Throws: ``FeedError`` `missingKey` when `keyParameter` is set and the source has no
    ///   key; `configuration` when the source has a key but no `keyParameter` to send it in.
    public static func router(for source: SourceDefinition) throws -> any Router {
        let parameter = source.options[keyParameter]
        switch (parameter.isEmpty, source.key) {
        case (true, nil):
            return DATEX2Router(baseURL: source.baseURL)
        case (true, .some):
            throw FeedError(.configuration, provider: name,
                            message: "source '\(source.name)' has an API key but no keyParameter naming the query parameter that carries it, so the key would not be sent")
        case (false, _):
            return DATEX2Router(baseURL: source.baseURL, key: (parameter, try source.requiredKey()))
        }
    }

    /// The settings a source's options give.
    static func settings(_ definition: SourceDefinition) -> DATEX2Mapper.Settings {
        let language = definition.options[language]
        return DATEX2Mapper.Settings(language: language.isEmpty ? nil : language,
                                     timeZone: ProviderTimeZone(identifier: definition.options[timeZone]) ?? .utc)
    }

    public static func read(file: URL, contentType: String?, source: String,
                            _ body: (FeedRecord) throws -> Void) throws -> ResponseVerdict {
        try read(file: file, contentType: contentType, definition: SourceDefinition(name: source, provider: name), body)
    }

    public static func read(file: URL, contentType: String?, definition: SourceDefinition,
                            _ body: (FeedRecord) throws -> Void) throws -> ResponseVerdict {
        var (kind, head) = try BodySniffer.sniff(file)
        // NDW's .xml.gz files come as application/gzip or application/octet-stream, with no
        // Content-Encoding: recognised by their magic bytes and inflated while read.
        let compressed = kind == .gzip
        if compressed {
            head = try Gzip.head(file, provider: name)
            kind = BodySniffer.kind(of: head)
        }
        guard kind == .xml else {
            throw BodySniffer.unexpected(kind, head: head, contentType: contentType, provider: name,
                                         expected: compressed ? "DATEX II XML (a SituationPublication) in its gzip file"
                                            : "DATEX II XML (a SituationPublication)")
        }
        let settings = settings(definition)
        let source = definition.name
        let charset = XMLRecordReader.charset(inContentType: contentType)
        var verdict = ResponseVerdict.complete
        // Reading on one thread; mapping and storing on this one (mapping a record costs about
        // what storing it does, and a tenth of reading its 2 KB of XML).
        try ParsePipeline.run(
            weight: { output in if case .record(let read) = output { read.weight } else { 0 } },
            produce: { (emit: (Output) throws -> Void) in
                // The reader keeps its callback only for this call.
                try withoutActuallyEscaping(emit) { emit in
                    let reader = DATEX2DocumentReader(timeZone: settings.timeZone) { try emit(Output.record($0)) }
                    if compressed {
                        // The HTTP charset describes the compressed file: the document's own
                        // declaration (or UTF-8) decides.
                        try Gzip.inflate(file, provider: name) { try reader.parse($0) }
                        try emit(.verdict(try reader.finish()))
                    } else {
                        try emit(.verdict(try reader.read(file: file, charset: charset)))
                    }
                }
            },
            consume: { (output: Output) in
                switch output {
                case .record(let read):
                    try body(DATEX2Mapper.map(read.record, publicationTime: read.publicationTime, settings: settings, source: source))
                case .verdict(let last):
                    verdict = last
                }
            })
        return verdict
    }

    /// What the reading thread hands over: records, then the verdict.
    enum Output: Sendable {
        case record(DATEX2DocumentReader.Read)
        case verdict(ResponseVerdict)
    }
}
