import Foundation
import IncidentCore
import IncidentNetworking
import IncidentXML

/// Open511 road events (open511.org): the 511 systems of Canada and the US that publish the
/// standard, such as 511 SF Bay (`https://api.511.org/traffic/events`, key `api_key`) and
/// DriveBC (`https://api.open511.gov.bc.ca/events`, no key).
///
/// Facts (Open511 API documentation; the recorded pages of 511 SF Bay, 2023-05-31, and
/// DriveBC, 2023-06): answers are JSON (`format=json`) or XML; a list is paged, each page
/// linking to the next by `pagination.next_url` (relative to the request, or absolute; 511.org
/// repeats the `api_key` in it), the last page having none. A poll reads every page before it
/// stores anything (``nextPage(after:contentType:requestURL:)``): it is complete only when
/// each page was read. The reader is chosen by sniffing the body.
public enum Open511Provider: FeedProvider {
    public static let name = "open511"

    /// `format`: what the request asks for (`format=` and `Accept`).
    public static let format = ProviderOption.choice(
        "format", ["json", "xml"], default: "json",
        help: "response format asked for (`format=`); the answer is read whatever format it comes in")
    /// `timeZone`: the jurisdiction's zone.
    public static let timeZone = ProviderOption.timeZone(
        help: "the jurisdiction's zone: `recurring_schedules` dates and daily times are local times there (DriveBC: `America/Vancouver`); instants without a zone are UTC")

    public static let options: [any ProviderOptionDeclaration] = [format, timeZone]
    /// 511.org's key parameter.
    public static let keyParameter = "api_key"
    public static let keyParameterNames = [keyParameter]
    /// The key is optional: sent when the source has one.
    public static let requiresKey = false

    /// `GET <baseURL>?format=json&api_key=KEY`: a source gives its server's events endpoint as
    /// `baseURL`; the key is optional (DriveBC needs none).
    /// - Throws: ``FeedError`` `configuration` without a `baseURL`.
    public static func router(for source: SourceDefinition) throws -> any Router {
        guard let baseURL = source.baseURL else {
            throw FeedError(.configuration, provider: name,
                            message: "source '\(source.name)' has no baseURL: give the server's events endpoint, e.g. https://api.open511.gov.bc.ca/events or https://api.511.org/traffic/events")
        }
        let asked = source.options[Self.format]
        return EndpointRouter(baseURL: baseURL, query: [.text("format", asked)] + (source.key.map { [.key(keyParameter, $0)] } ?? []),
                              accept: asked == "xml" ? "application/xml, text/xml" : "application/json",
                              sampleResponse: sampleResponse)
    }

    /// One event of the 511 SF Bay page, for stubbed tests.
    static let sampleResponse =
        StubResponse(headers: ["Content-Type": "application/json"], text: """
            {"events":[{"id":"511.org/1","status":"ACTIVE","headline":"Disabled vehicle","event_type":"INCIDENT",\
            "event_subtypes":["Disabled vehicle"],"severity":"Minor","created":"2024-01-01T00:00Z","updated":"2024-01-01T00:00Z",\
            "geography":{"type":"Point","coordinates":[-121.95,38.37]},"roads":[{"name":"I-80 E"}],\
            "schedule":{"intervals":["2024-01-01T00:00Z/"]}}],"pagination":{"offset":0},"meta":{"version":"v1"}}
            """)

    public static func read(file: URL, contentType: String?, source: String, _ body: (FeedRecord) throws -> Void) throws -> ResponseVerdict {
        try read(file: file, contentType: contentType, definition: SourceDefinition(name: source, provider: name), body)
    }

    public static func read(file: URL, contentType: String?, definition source: SourceDefinition,
                            _ body: (FeedRecord) throws -> Void) throws -> ResponseVerdict {
        let zone = ProviderZone(identifier: source.options[timeZone]) ?? .utc
        let (kind, head) = try BodySniffer.sniff(file)
        switch kind {
        case .json:
            return try Open511JSONReader.format.read(file: file, contentType: contentType,
                                                     map: { Open511Mapper.record($0, source: source.name, zone: zone) }, body)
        case .xml:
            return try Open511XMLReader.format.read(file: file, contentType: contentType,
                                                    map: { Open511Mapper.record($0, source: source.name, zone: zone) }, body)
        case .html, .empty, .gzip, .other:
            throw BodySniffer.unexpected(kind, head: head, contentType: contentType, provider: name, expected: "Open511 JSON or XML")
        }
    }

    /// Open511 pages its answer (`pagination`): every page is downloaded before any is read.
    public static var answersInPages: Bool { true }

    /// The next page: `pagination.next_url` (JSON) or the `rel="next"` link of `<pagination>`
    /// (XML), resolved against the request (``PageLink``), carrying the request's key; nil on
    /// the last page and for a body that is neither (reading it then fails with the cause).
    public static func nextPage(after file: URL, contentType: String?, requestURL: URL) throws -> URL? {
        let link: String? = switch try BodySniffer.sniff(file).kind {
        case .json: try Open511JSONReader.nextURL(in: file)
        case .xml: Open511XMLReader.nextURL(in: file, charset: charset(contentType))
        default: nil
        }
        return try link.map { try PageLink.resolve($0, against: requestURL, keyParameterNames: keyParameterNames, provider: name) }
    }

    static func charset(_ contentType: String?) -> String? {
        XMLRecordReader.charset(inContentType: contentType)
    }
}
