/// Where a stored incident stands at an instant. The five states are disjoint and cover every
/// incident, so `active + planned + suspended + ended + cleared = total` (`incidents stats`);
/// `list` shows the state in its STATUS column and `--status` selects by it. Computed at the
/// query's `now`, never stored: a planned incident is active from its start time on, without a
/// poll. Each store computes it in SQL as this does (``StoredIncident/status(at:)``).
public enum IncidentStatus: String, CaseIterable, Sendable {
    /// Listed by its source, started, not ended, not suspended: in force now.
    case active
    /// Listed by its source, but its start time (`started_at`) is after `now`; or the provider
    /// calls it planned (DATEX II `validityStatus` `planned`) and gives no start time.
    case planned
    /// Listed by its source, but the provider says it is suspended (DATEX II `validityStatus`
    /// `suspended`), whatever its times say.
    case suspended
    /// Still listed by its source (`cleared_at` empty), but the provider's own end time
    /// (`ended_at`) has passed.
    case ended
    /// No longer listed by a complete poll of its source (`cleared_at` set), whatever `ended_at` says.
    case cleared
}

extension StoredIncident {
    /// The incident's state at `now`, the first of these that holds: cleared (the store cleared
    /// it), ended (the provider's end time is not after `now`), suspended (the provider says
    /// so), planned (its start is after `now`, or the provider says planned and gives no start),
    /// else active.
    public func status(at now: UTCInstant) -> IncidentStatus {
        if clearedAt != nil { return .cleared }
        if let ended = incident.endedAt, ended <= now { return .ended }
        if incident.validity == .suspended { return .suspended }
        if incident.startedAt.map({ $0 > now }) ?? (incident.validity == .planned) { return .planned }
        return .active
    }
}

extension IncidentStatistics {
    /// Incidents still listed whose provider end time has passed (``IncidentStatus/ended``):
    /// what is in no other state, as the five states are disjoint.
    public var ended: Int { total - active - planned - suspended - cleared }
}
