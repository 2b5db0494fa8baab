/// Ports between the feeds (`IncidentFeeds`) and the use cases: what one poll of one source
/// yields, record by record, and how the response as a whole ended.

/// One record of a response, after mapping.
public enum FeedRecord: Sendable {
    /// A record that mapped to an incident.
    case incident(Incident)
    /// A record that could not be read faithfully: kept aside with its reason (quarantined),
    /// never stored as an incident and never allowed to stop the rest of the response.
    case rejected(RejectedRecord)

    /// The provider's id of the record, when it could be read.
    public var externalID: String? {
        switch self {
        case .incident(let incident): incident.externalID
        case .rejected(let record): record.externalID
        }
    }
}

/// A record set aside: why, where, and a log-safe excerpt of what the provider sent.
public struct RejectedRecord: Equatable, Sendable {
    /// The provider's id of the record, when it could be read. An incident with this id is
    /// not cleared by the poll that rejected its record.
    public var externalID: String?
    /// Where in the response: `itemList at line 12`, `items[3]`.
    public var position: String
    /// What is wrong, in one line, with no secret in it.
    public var reason: String
    /// The record as sent, redacted and cut to at most ``maxExcerptBytes`` bytes.
    public var excerpt: String?

    /// The longest excerpt kept, in UTF-8 bytes.
    public static let maxExcerptBytes = 1024

    public init(externalID: String?, position: String, reason: String, excerpt: String? = nil) {
        self.externalID = externalID
        self.position = position
        self.reason = reason
        self.excerpt = excerpt
    }
}

/// How a response ended, as its reader judged it after the last record.
///
/// The completeness rule (docs/providers.md, "The incident lifecycle"): a poll may clear the source's incidents that it
/// no longer lists only when the response positively said it succeeded (its expected root
/// element and a success code), every record in it was read, every record's id could be read,
/// and the number of records matches the number the response declares (when it declares one).
public struct ResponseVerdict: Equatable, Sendable {
    /// Why the response cannot be trusted to list every active incident (one line each). Empty
    /// means complete.
    public var incompleteBecause: [String]
    /// Things worth an operator's attention that do not make the response incomplete
    /// (characters replaced in a value, a repeated record).
    public var warnings: [String]
    /// When the document says it was published or last updated (WZDx `feed_info.update_date`,
    /// 2.0 `feed_update_date`; DATEX II `publicationTime`); nil when it says nothing (GITS, ITS,
    /// Open511). A poll whose document is older than the newest already applied for its
    /// source is stored as history only (``StaleDocument``). For a paged answer: the earliest
    /// of its pages'.
    public var publishedAt: UTCInstant?
    /// How many pages the answer came in. An answer of several pages may have been read while
    /// the server's list moved (Open511 pages by offset), so what it does not list is cleared
    /// only when the previous complete poll did not list it either (docs/providers.md, "When a poll
    /// clears").
    public var pages: Int

    public init(incompleteBecause: [String] = [], warnings: [String] = [], publishedAt: UTCInstant? = nil, pages: Int = 1) {
        self.incompleteBecause = incompleteBecause
        self.warnings = warnings
        self.publishedAt = publishedAt
        self.pages = pages
    }

    /// The response lists every active incident of the source.
    public var isComplete: Bool { incompleteBecause.isEmpty }

    /// A response the reader found nothing wrong with.
    public static let complete = ResponseVerdict()
}

/// The records of one fetched response, read while streaming.
public protocol IncidentStream {
    /// Reads the response, passing each record to `body` in feed order, and returns the
    /// verdict on the response as a whole.
    ///
    /// - Throws: when the response is not an answer at all (malformed beyond reading, a
    ///   provider error envelope, another document): records already passed to `body` must be
    ///   discarded by the caller (the store rolls its transaction back). Also rethrows what
    ///   `body` throws.
    func read(_ body: (FeedRecord) throws -> Void) throws -> ResponseVerdict
}

/// Where a poll's response comes from.
public enum FeedOrigin: Equatable, Sendable {
    /// A live request to the provider's API.
    case live
    /// A saved response replayed from a file (`ingest --file`): it adds history; it clears
    /// nothing unless `complete` says the file is a complete answer of its time.
    case file(path: String, complete: Bool)
}

/// One configured source that can be polled (a provider, its parameters and its key).
public protocol IncidentFeed: Sendable {
    /// The configured source name; stored as `incidents.source`.
    var source: String { get }

    /// Live API or a saved file. A file neither waits for nor changes the source's quota state,
    /// which belongs to the live API.
    var origin: FeedOrigin { get }

    /// Fetches one response and passes it to `consume` as a stream. The response is held outside
    /// memory (a temporary file) and removed when this returns or throws.
    ///
    /// `consume` may start while the response is still downloading; when the download then
    /// fails and is retried, the stream `consume` was reading throws, and `consume` is called
    /// again with the new response: each call must stand alone (one transaction, rolled back
    /// when it throws).
    ///
    /// - Throws: the feed's typed errors (network, HTTP status, provider error envelope,
    ///   malformed body), or whatever `consume` throws.
    func poll<Result>(_ consume: (any IncidentStream) throws -> Result) async throws -> Result
}

/// An error that means the source's request quota is used up, so polling again before it
/// resets only wastes requests (and may get the key suspended).
public protocol QuotaExhaustion: Error {
    /// When the source may be polled again, given when this error happened; nil when this
    /// error is not about the quota.
    func quotaResumesAt(failedAt: UTCInstant) -> UTCInstant?
}
