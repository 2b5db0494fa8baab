/// How a stored poll ends, from what the store counted while writing it: the one place that
/// decides complete or incomplete and words the run's warnings, so that every store records
/// the same run for the same poll (README, "Lifecycle").
public struct PollOutcome: Equatable, Sendable {
    /// Why the poll may not list every active incident: the reader's verdict, then records set
    /// aside without a readable id.
    public var incompleteBecause: [String]
    /// Other notes: the reader's, repeated ids, records older than the stored state.
    public var warnings: [String]

    /// - Parameters:
    ///   - counts: the poll's counts (``IngestCounts/duplicates`` is reported).
    ///   - rejectedWithoutID: records set aside whose id could not be read.
    ///   - older: records older than the stored state of their incident (a replayed file).
    public init(verdict: ResponseVerdict, counts: IngestCounts, rejectedWithoutID: Int, older: Int, observedAt: UTCInstant) {
        incompleteBecause = verdict.incompleteBecause
        if rejectedWithoutID > 0 {
            incompleteBecause.append("\(rejectedWithoutID) record(s) set aside had no readable id, so the response may not list every active incident")
        }
        warnings = verdict.warnings
        if counts.duplicates > 0 {
            warnings.append("\(counts.duplicates) record(s) repeated an id listed earlier in the response; the first of each was kept")
        }
        if older > 0 {
            warnings.append("\(older) record(s) were older than the stored state of their incident (observed \(observedAt.rfc3339)); only their first-seen time was used")
        }
    }

    /// The poll lists every active incident of its source.
    public var isComplete: Bool { incompleteBecause.isEmpty }

    /// Whether `poll` may clear the incidents it did not list: complete, and live or a
    /// replay said to be complete.
    public func mayClear(_ poll: PollContext) -> Bool { isComplete && poll.mayClear }

    /// The run's status and warnings (why it is incomplete first).
    public var status: RunStatus { isComplete ? .succeeded : .incomplete }
    public var runWarnings: [String] { incompleteBecause + warnings }
}
