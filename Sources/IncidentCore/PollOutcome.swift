/// How a stored poll ends, from what the store counted while writing it: the one place that
/// decides complete or incomplete and words the run's warnings, so that every store records
/// the same run for the same poll (docs/providers.md, "The incident lifecycle").
public struct PollOutcome: Equatable, Sendable {
    /// Why the poll may not list every active incident: the reader's verdict, then records set
    /// aside without a readable id.
    public var incompleteBecause: [String]
    /// Other notes: the reader's, repeated ids, records older than the stored state.
    public var warnings: [String]
    /// The response was a stale document (``PollContext/stale``).
    public var isStale: Bool
    /// How many pages the answer came in. With more than one, what it does not list is cleared
    /// only when the previous complete poll did not list it either.
    public var pages: Int

    /// - Parameters:
    ///   - counts: the poll's counts (``IngestCounts/duplicates`` is reported).
    ///   - rejectedWithoutID: records set aside whose id could not be read.
    ///   - older: records older than the stored state of their incident (a replayed file).
    ///   - publication: the response's publication time as judged for its source.
    public init(verdict: ResponseVerdict, counts: IngestCounts, rejectedWithoutID: Int, older: Int, poll: PollContext,
                publication: Publication = Publication()) {
        incompleteBecause = verdict.incompleteBecause
        if rejectedWithoutID > 0 {
            incompleteBecause.append("\(rejectedWithoutID) record(s) set aside had no readable id, so the response may not list every active incident")
        }
        warnings = poll.stale.map { [$0.description] } ?? []
        warnings += verdict.warnings
        if let note = publication.warning { warnings.append(note) }
        if counts.duplicates > 0 {
            warnings.append("\(counts.duplicates) record(s) repeated an id listed earlier in the response with the same content; the first of each was kept")
        }
        if older > 0 {
            warnings.append("\(older) record(s) were older than the stored state of their incident (observed \(poll.observedAt.rfc3339)); only their first-seen time was used")
        }
        isStale = poll.stale != nil
        pages = verdict.pages
    }

    /// The poll lists every active incident of its source.
    public var isComplete: Bool { incompleteBecause.isEmpty }

    /// Whether `poll` may clear the incidents it did not list: complete, and live or a
    /// replay said to be complete, and not stale.
    public func mayClear(_ poll: PollContext) -> Bool { isComplete && poll.mayClear }

    /// The run's status and warnings (why it is incomplete first).
    public var status: RunStatus { isStale ? .stale : isComplete ? .succeeded : .incomplete }
    public var runWarnings: [String] { incompleteBecause + warnings }

    /// Clears what `poll` may clear (``mayClear(_:)``) through `store`, and returns how many
    /// incidents it cleared: for a one-page answer, every active incident it did not list, at
    /// its observation time; for an answer of several pages, only those the previous complete
    /// poll did not list either, at that poll's time, noting how many it keeps until a second
    /// complete poll confirms (docs/providers.md, "When a poll clears", rule 7).
    ///
    /// A poll fetched no later than another poll of its source (a replay `--as-of` an earlier
    /// time) adds history at its own time without rewriting the present: the active incidents
    /// it does not list that a poll at or after its time listed stay active, and its warnings
    /// say how many and when they were last listed (walk finding 24: such a replay said
    /// `succeeded`, cleared 0, and nothing why).
    public mutating func clear(_ store: some UnlistedIncidents, poll: PollContext) throws -> Int {
        guard mayClear(poll) else { return 0 }
        let cleared = pages > 1 ? try clearConfirmed(store) : try store.clearUnlisted(at: poll.observedAt)
        if let later = try store.listedLater() {
            warnings.append(later.lastSeen > poll.observedAt
                ? "older than the newest poll that listed them (\(later.lastSeen.rfc3339)): \(later.count) incident(s) it does not list stay active, as a later poll listed them; an older answer adds history at its own time without rewriting the present"
                : "fetched at the same time as a poll that listed them (\(later.lastSeen.rfc3339)): \(later.count) incident(s) it does not list stay active, as that poll listed them; of two answers of one instant, neither clears what the other listed")
        }
        return cleared
    }

    /// The clears of an answer of several pages (rule 7): what the previous complete poll did
    /// not list either, at its time; the others wait, noted in `warnings`.
    private mutating func clearConfirmed(_ store: some UnlistedIncidents) throws -> Int {
        let previous = try store.previousCompleteObservation()
        let cleared = try previous.map { try store.clearUnlisted(at: $0) } ?? 0
        let waiting = try store.unlistedActive()
        guard waiting > 0 else { return cleared }
        let why = "the answer came in \(pages) pages, and a list paged by offset can move between page requests"
        if let previous {
            warnings.append("\(waiting) incident(s) it does not list but the previous complete poll (\(previous.rfc3339)) did stay active until the next complete poll confirms their absence: \(why)")
        } else {
            warnings.append("\(waiting) incident(s) it does not list stay active: \(why), and no earlier complete poll confirms their absence")
        }
        return cleared
    }
}

/// How a store clears the incidents a poll did not list, inside the poll's transaction.
public protocol UnlistedIncidents {
    /// When the source's previous complete (`succeeded`) poll was fetched, before this one.
    func previousCompleteObservation() throws -> UTCInstant?
    /// Marks cleared, at `instant`, the source's active incidents this poll did not list (nor
    /// reject) that no poll saw at or after `instant`; returns how many.
    func clearUnlisted(at instant: UTCInstant) throws -> Int
    /// The source's active incidents this poll did not list and no poll saw at or after it.
    func unlistedActive() throws -> Int
    /// The source's active incidents this poll did not list (nor reject) that a poll saw at or
    /// after its observation time, which it therefore never clears: how many, and the latest
    /// time one of them was seen (`last_seen_at`); nil when there are none. Reads the source's
    /// active set, as the clears do.
    func listedLater() throws -> (count: Int, lastSeen: UTCInstant)?
}

extension RejectedRecord {
    /// The second of two records with the same id and different content in one response
    /// ("twins"): set aside, the first kept. `position` is its place in the response (1-based,
    /// counting every record); the excerpt shows the fields that tell twins apart.
    public static func twin(externalID: String, position: Int, category: String, road: String?, location: String?,
                            description: String?, startedAt: UTCInstant?, endedAt: UTCInstant?) -> RejectedRecord {
        let fields: [(String, String?)] = [("category", category), ("road", road), ("location", location), ("description", description),
                                           ("startedAt", startedAt?.rfc3339), ("endedAt", endedAt?.rfc3339)]
        let text = fields.compactMap { name, value in value.map { "\(name)=\($0)" } }.joined(separator: "; ")
        var excerpt = ""
        for character in text {
            if excerpt.utf8.count + character.utf8.count > maxExcerptBytes { break }
            excerpt.append(character)
        }
        return RejectedRecord(externalID: externalID, position: "record \(position) of the response",
                              reason: "twins: the id was listed earlier in this response with different content; the first was kept",
                              excerpt: excerpt)
    }

    /// ``twin(externalID:position:category:road:location:description:startedAt:endedAt:)`` of `incident`.
    public static func twin(of incident: Incident, position: Int) -> RejectedRecord {
        twin(externalID: incident.externalID, position: position, category: incident.category.rawValue, road: incident.road,
             location: incident.location, description: incident.description, startedAt: incident.startedAt, endedAt: incident.endedAt)
    }
}
