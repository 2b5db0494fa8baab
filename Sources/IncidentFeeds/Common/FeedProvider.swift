import Foundation
import IncidentCore
import IncidentNetworking

/// A provider: its options, how to ask for its feed and how to read what it answers. Adding a
/// provider means adding one folder (router, DTO, reader, mapper, provider) with a type
/// conforming to this protocol and listing it in ``ProviderRegistry/all``; the configuration
/// reader, `check-config`, docs/operator.md's option table and the pipeline do not change.
public protocol FeedProvider: Sendable {
    /// The name used in configuration (`"provider": "gits"`).
    static var name: String { get }

    /// The options a source of this provider may set in the configuration, each with its type,
    /// default, check and help (``ProviderOption``). Any other field is refused.
    static var options: [any ProviderOptionDeclaration] { get }

    /// The query parameters (or headers) that carry this provider's key: registered with
    /// `Redaction` at startup (``ProviderRegistry/registerKeyParameterNames()``), so their
    /// values are hidden in any text, even before the first request is built.
    static var keyParameterNames: [String] { get }

    /// Whether every source of this provider needs a key (the configuration refuses one
    /// without). False when the server decides: Open511's DriveBC needs none, 511.org one.
    /// Default: true.
    static var requiresKey: Bool { get }

    /// The request for one poll of `source`, built from its key and options.
    /// - Throws: ``FeedError`` `missingKey` when the source has no key.
    static func router(for source: SourceDefinition) throws -> any Router

    /// Reads a response body from `file`, passing each mapped record to `body` while reading,
    /// and returns the verdict on the response as a whole (see ``ResponseVerdict``).
    ///
    /// - Parameters:
    ///   - source: the source name to stamp on incidents.
    ///   - contentType: the HTTP Content-Type, when the body came over HTTP (its charset is
    ///     used when the document does not declare one; the reader is chosen by sniffing).
    /// - Throws: ``FeedError`` (provider error envelope, gateway error, unexpected or malformed
    ///   body), or what `body` throws.
    static func read(file: URL, contentType: String?, source: String, _ body: (FeedRecord) throws -> Void) throws -> ResponseVerdict

    /// Reads a response body of `source`, for providers whose reading depends on the source's
    /// options (a time zone for local times). Default: ``read(file:contentType:source:_:)``
    /// with the source's name.
    static func read(file: URL, contentType: String?, definition source: SourceDefinition,
                     _ body: (FeedRecord) throws -> Void) throws -> ResponseVerdict

    /// Turns a network error into this provider's typed error where the body says more (e.g.
    /// HTTP 401 carrying an "invalid key" result code). Default: ``classifyQuota(_:provider:)``.
    static func classify(_ error: NetworkError) -> any Error

    /// For an API that pages its answer: the URL of the page after the one in `file` (which was
    /// fetched from `requestURL`; a relative link resolves against it), or nil on the last
    /// page. A poll is complete only when every page was read. Default: nil (one page).
    /// - Throws: ``FeedError`` when the page cannot be read far enough to tell.
    static func nextPage(after file: URL, contentType: String?, requestURL: URL) throws -> URL?

    /// Whether an answer may come in several pages (``nextPage(after:contentType:requestURL:)``
    /// says): such a poll downloads every page before reading any. A one-page answer is read
    /// while it downloads. Default: false.
    static var answersInPages: Bool { get }
}

extension FeedProvider {
    public static func classify(_ error: NetworkError) -> any Error { classifyQuota(error, provider: name) }

    public static func nextPage(after file: URL, contentType: String?, requestURL: URL) throws -> URL? { nil }

    public static var answersInPages: Bool { false }

    public static var requiresKey: Bool { true }

    public static func read(file: URL, contentType: String?, definition source: SourceDefinition,
                            _ body: (FeedRecord) throws -> Void) throws -> ResponseVerdict {
        try read(file: file, contentType: contentType, source: source.name, body)
    }

    /// HTTP 429 with a `Retry-After`, still answered after the retries, is an exhausted quota
    /// (RFC 6585 §4): a typed `quotaExceeded` that pauses the source for that long (at most a
    /// day). A bare 429 says only "too many requests": it was retried with the source's
    /// exponential back-off (`retry`), and stays a failed poll that the next one repeats at the
    /// source's interval; it never pauses the source until midnight, which only the providers'
    /// explicit quota codes do (issue 20). Other errors are returned unchanged.
    /// A data.go.kr gateway error document in the body of an HTTP error (the gateway answers in
    /// JSON with HTTP 403: `datagokr/gateway_error_30_json_http403_2026-08.json`) is decoded as
    /// its HTTP 200 and XML forms are (``KoreanAPIEnvelope``): `invalidKey` for code 30, not a
    /// bare "HTTP 403".
    static func classifyQuota(_ error: NetworkError, provider: String) -> any Error {
        if let gateway = gatewayError(in: error, provider: provider) { return gateway }
        guard error.statusCode == 429, error.retryAfterSeconds != nil else { return error }
        return FeedError(.quotaExceeded, provider: provider, code: "HTTP 429",
                         message: "the API answered HTTP 429 Too Many Requests after \(Plural.count(error.attempts, "attempt")): the request quota is used up",
                         retryAfterSeconds: error.retryAfterSeconds)
    }
}

extension FeedProvider {
    /// The gateway error a 4xx/5xx body holds, read by ITS's reader (which reads the gateway's
    /// document in JSON and XML alike) from the body's first 4 KiB; nil when it holds none.
    static func gatewayError(in error: NetworkError, provider: String) -> FeedError? {
        guard let status = error.statusCode, status >= 400, let excerpt = error.bodyExcerpt,
              excerpt.contains(KoreanAPIEnvelope.gatewayRoot) else { return nil }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("gateway-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: file) }
        do {
            try Data(excerpt.utf8).write(to: file)
            _ = try ITSProvider.read(file: file, contentType: nil, source: provider) { _ in }
        } catch var gateway as FeedError where [.gatewayError, .invalidKey, .quotaExceeded, .apiError].contains(gateway.kind) {
            gateway.provider = provider
            gateway.message += " (HTTP \(status))"
            return gateway
        } catch {}
        return nil
    }
}

/// The providers this build knows.
public enum ProviderRegistry {
    public static let all: [any FeedProvider.Type] = [GITSProvider.self, ITSProvider.self, DATEX2Provider.self, Open511Provider.self, WZDxProvider.self]

    public static var names: [String] { all.map { $0.name } }

    /// Registers every provider's key parameter names with `Redaction`. Call once at startup.
    public static func registerKeyParameterNames() {
        for provider in all {
            for name in provider.keyParameterNames { Redaction.register(keyParameterName: name) }
        }
    }

    public static func provider(named name: String) -> (any FeedProvider.Type)? {
        all.first { $0.name == name }
    }

    /// The options `source` sets, as `check-config` shows them (`bbox=126.76,37.41,127.18,37.7`),
    /// in the order the provider declares them.
    public static func describeOptions(of source: SourceDefinition) -> [String] {
        guard let provider = provider(named: source.provider) else { return [] }
        return provider.options.compactMap { option in
            source.options.configured(option.name).map { "\(option.name)=\(option.displayText($0))" }
        }
    }

    /// A feed that polls `source` over HTTP with `client`.
    public static func feed(for source: SourceDefinition, client: any HTTPClient) throws -> any IncidentFeed {
        guard let provider = provider(named: source.provider) else {
            throw FeedError(.configuration, provider: source.provider, message: "unknown provider '\(source.provider)'")
        }
        return HTTPFeed(definition: source, provider: provider, client: client)
    }

    /// A feed that replays a saved response file as one poll of `source`.
    public static func fileFeed(source: String, provider name: String, file: URL, complete: Bool = false) throws -> any IncidentFeed {
        try fileFeed(definition: SourceDefinition(name: source, provider: name), file: file, complete: complete)
    }

    /// A feed that replays a saved response file as one poll of a configured source, read with
    /// the source's options (its time zone, …).
    public static func fileFeed(definition: SourceDefinition, file: URL, complete: Bool = false) throws -> any IncidentFeed {
        guard let provider = provider(named: definition.provider) else {
            throw FeedError(.configuration, provider: definition.provider,
                            message: "unknown provider '\(definition.provider)' (known: \(names.joined(separator: ", ")))")
        }
        return FileFeed(definition: definition, provider: provider, file: file, complete: complete)
    }
}

/// Polls a source over HTTP. A provider that answers in one page is read while its body
/// downloads (``HTTPClient/withStreamingResponse(for:label:_:)``): parsing and storing overlap
/// the transfer, and a download that fails half-way rolls the poll's transaction back (a retry
/// reads the new response from its start, in a new transaction). A provider that pages
/// (``FeedProvider/answersInPages``): each page's body is streamed to a temporary file; once
/// every page is on disk they are read, in order, as one response (one transaction), then
/// removed. A page that fails fails the poll before anything is stored.
struct HTTPFeed: IncidentFeed {
    var definition: SourceDefinition
    var provider: any FeedProvider.Type
    var client: any HTTPClient

    /// The most pages one poll follows; more is refused as a pagination loop or a runaway feed.
    static let maxPages = 500

    var source: String { definition.name }
    var origin: FeedOrigin { .live }

    /// A ``FeedError`` of the poll names the source (`its-seoul: the ITS API refused the key`),
    /// as a ``NetworkError`` of it does by its label, so every error of a source's poll names
    /// it the same way (issue 20), whatever its provider.
    func poll<Result>(_ consume: (any IncidentStream) throws -> Result) async throws -> Result {
        do {
            return try await pollPages(consume)
        } catch var error as FeedError {
            error.provider = definition.name
            throw error
        }
    }

    private func pollPages<Result>(_ consume: (any IncidentStream) throws -> Result) async throws -> Result {
        var router: any Router = try provider.router(for: definition)
        if !provider.answersInPages {
            do {
                return try await client.withStreamingResponse(for: router, label: definition.name) { response in
                    try consume(ProviderStream(provider: provider, pages: [(response.fileURL, response.contentType)], definition: definition))
                }
            } catch let error as NetworkError {
                throw provider.classify(error)
            }
        }
        var pages: [(file: URL, contentType: String?)] = []
        defer { for page in pages { try? FileManager.default.removeItem(at: page.file) } }
        var requested: Set<String> = []
        do {
            while true {
                // Pages after the first are named in errors (`sf511 page 2: GET … failed: HTTP 500`).
                let label = pages.isEmpty ? definition.name : "\(definition.name) page \(pages.count + 1)"
                let page = try await client.withResponse(for: router, label: label) { response in
                    let requestURL = try router.asURLRequest().url ?? router.baseURL
                    let next = try provider.nextPage(after: response.fileURL, contentType: response.contentType, requestURL: requestURL)
                    let kept = TemporaryBodies.fileURL(in: response.fileURL.deletingLastPathComponent())
                    try FileManager.default.moveItem(at: response.fileURL, to: kept)
                    return (kept, response.contentType, requestURL, next)
                }
                pages.append((page.0, page.1))
                requested.insert(page.2.absoluteString)
                guard let next = page.3 else { break }
                guard !requested.contains(next.absoluteString) else {
                    throw FeedError(.unexpectedResponse, provider: provider.name,
                                    message: "page \(pages.count) links back to a page already read (\(Redaction.redact(next))): the server's pagination loops; nothing was stored")
                }
                guard pages.count < Self.maxPages else {
                    throw FeedError(.unexpectedResponse, provider: provider.name,
                                    message: "the answer did not end after \(Self.maxPages) pages; nothing was stored")
                }
                guard RedirectOrigin.same(next, page.2) else {
                    throw FeedError(.unexpectedResponse, provider: provider.name,
                                    message: "page \(pages.count) links to another server (\(Redaction.redact(next))); the key is not sent there and nothing was stored")
                }
                router = PageRouter(url: next)
            }
        } catch let error as NetworkError {
            throw provider.classify(error)
        }
        return try consume(ProviderStream(provider: provider, pages: pages, definition: definition))
    }
}

/// The request for a page after the first: the link the previous page gave, as is.
struct PageRouter: Router {
    var url: URL
    var baseURL: URL { url }
    var path: String { "" }
    var task: RequestTask { .plain }
}

/// Whether two URLs share scheme, host and port (the same origin, RFC 6454).
enum RedirectOrigin {
    static func same(_ a: URL, _ b: URL) -> Bool {
        a.scheme?.lowercased() == b.scheme?.lowercased() && a.host?.lowercased() == b.host?.lowercased()
            && (a.port ?? defaultPort(a)) == (b.port ?? defaultPort(b))
    }

    private static func defaultPort(_ url: URL) -> Int? {
        switch url.scheme?.lowercased() {
        case "http": 80
        case "https": 443
        default: nil
        }
    }
}

/// Replays a saved response as one poll (`incident-scheduler ingest --file`).
struct FileFeed: IncidentFeed {
    /// The source the file is replayed as: its name and provider options.
    var definition: SourceDefinition
    var provider: any FeedProvider.Type
    var file: URL
    /// The file is a complete answer of its time (`--complete`): it may clear.
    var complete: Bool
    var source: String { definition.name }
    var origin: FeedOrigin { .file(path: file.path, complete: complete) }

    func poll<Result>(_ consume: (any IncidentStream) throws -> Result) async throws -> Result {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: file.path, isDirectory: &isDirectory), !isDirectory.boolValue,
              FileManager.default.isReadableFile(atPath: file.path) else {
            throw FeedError(.unreadableFile, provider: provider.name,
                            message: "cannot read \(file.path): no such file, a directory, or not readable")
        }
        // A saved page of a paged answer is not the whole answer: it may not clear.
        let linksOn = (try? provider.nextPage(after: file, contentType: nil, requestURL: file)) != nil
        return try consume(ProviderStream(provider: provider, pages: [(file, nil)], definition: definition,
                                          unreadPages: linksOn))
    }
}

/// The pages of one response, read in order as one stream.
struct ProviderStream: IncidentStream {
    var provider: any FeedProvider.Type
    var pages: [(file: URL, contentType: String?)]
    var definition: SourceDefinition
    /// The text an incident takes from the response, where a server may echo the key: every
    /// text content field (``IncidentField/textPath``).
    /// Read and written through the fields' accessors, not their key paths (a key path held in
    /// a variable costs a generic projection per use: ``IncidentField/text(_:_:hashesAbsence:get:set:)``).
    static let textFields = IncidentField.content.filter { $0.textPath != nil }

    /// The last page links to a next page that was not fetched (a saved page replayed).
    var unreadPages = false

    /// Reads every page; each incident's text passes through the secrets redactor first, so
    /// that a key a server echoes (in a description, a location) never reaches the database.
    /// An id listed on two pages (the server's list moved while it was paged) makes the answer
    /// incomplete: another event may have moved past a page boundary unseen.
    func read(_ body: (FeedRecord) throws -> Void) throws -> ResponseVerdict {
        let redact = Redaction.secretsRedactor()
        var pageOf: [String: Int] = [:]
        var movedIDs: [(id: String, first: Int, again: Int)] = []
        var verdict = ResponseVerdict.combining(try pages.enumerated().map { number, page in
            try provider.read(file: page.file, contentType: page.contentType, definition: definition) { record in
                if pages.count > 1, let id = record.externalID {
                    if let first = pageOf[id] {
                        if first != number { movedIDs.append((id, first + 1, number + 1)) }
                    } else {
                        pageOf[id] = number
                    }
                }
                guard let redact, case .incident(var incident) = record else { return try body(record) }
                for field in Self.textFields {
                    if case .text(let text) = field.value(incident) { field.assign(&incident, .text(redact(text))) }
                }
                try body(.incident(incident))
            }
        })
        if let first = movedIDs.first {
            verdict.incompleteBecause.append("\(movedIDs.count) id(s) were listed on two pages (\(Redaction.redact(first.id)) on pages \(first.first) and \(first.again)): the server's list moved while it was paged, so an event may have moved past a page unseen")
        }
        if unreadPages {
            verdict.incompleteBecause.append("the response links to a next page that was not read (a saved page of a paged answer), so it does not list every active incident")
        }
        return verdict
    }
}
