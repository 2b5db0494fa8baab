/// The time order of a source's documents (docs/providers.md, "Time order"): a cache, a CDN or a
/// load-balanced replica can serve an older copy of a feed after a newer one. A document that
/// says when it was published (``ResponseVerdict/publishedAt``) is compared with the newest
/// publication time already applied for its source, which each store keeps
/// (`source_state.published_at`).

/// A document older than the newest already applied for its source: thrown by a store's
/// ``IngestStore/ingest(_:_:)`` (which then rolls back) so that the poll is stored again as
/// history only (``PollContext/asStale(_:)``, ``IngestStore/ingestInTimeOrder(_:_:)``).
public struct StaleDocument: Error, Equatable, Sendable, CustomStringConvertible {
    /// When the document says it was published.
    public var publishedAt: UTCInstant
    /// The newest publication time already applied for the source.
    public var newestApplied: UTCInstant

    public init(publishedAt: UTCInstant, newestApplied: UTCInstant) {
        self.publishedAt = publishedAt
        self.newestApplied = newestApplied
    }

    public var description: String {
        "the document was published at \(publishedAt.rfc3339), before \(newestApplied.rfc3339), the newest already applied for this source "
            + "(a cache or a replica served an older copy): it was stored as history at its own time and overwrote, reopened and cleared nothing"
    }
}

/// A response's publication time as it orders the source's documents.
public struct Publication: Equatable, Sendable {
    /// The most a publication time may lie after the response was fetched and still order
    /// documents (clocks differ): 300 s. A later one is ignored with a warning, so that one
    /// document stamped in the future cannot make every later one look older.
    public static let maxLeadSeconds: Int64 = 300

    /// The document's publication time, when it orders documents; nil when the document states
    /// none or one too far in the future.
    public var usable: UTCInstant?
    /// Why a stated publication time was ignored.
    public var warning: String?

    /// A response that states no publication time.
    public init() {}

    /// Judges the time `stated` by the response of `poll`, given the newest publication time
    /// already applied for the source.
    ///
    /// - Throws: ``StaleDocument`` when the usable time is earlier than `newestApplied` and
    ///   `poll` is not already stored as stale. An equal time is not older.
    public init(stated: UTCInstant?, poll: PollContext, newestApplied: UTCInstant?) throws(StaleDocument) {
        guard let stated else { return }
        let latest = (poll.stale.map { max(poll.observedAt, $0.publishedAt) } ?? poll.observedAt).adding(seconds: Self.maxLeadSeconds)
        guard stated <= latest else {
            warning = "the document says it was published at \(stated.rfc3339), more than \(Self.maxLeadSeconds) s after it was fetched "
                + "(\(poll.observedAt.rfc3339)); that time is ignored (is the publisher's clock wrong?)"
            return
        }
        usable = stated
        if poll.stale == nil, let newestApplied, stated < newestApplied {
            throw StaleDocument(publishedAt: stated, newestApplied: newestApplied)
        }
    }

    /// The time to keep as the source's newest applied publication after this poll: the usable
    /// time of a current (not stale) document.
    public func newestApplied(after poll: PollContext) -> UTCInstant? {
        poll.stale == nil ? usable : nil
    }
}
