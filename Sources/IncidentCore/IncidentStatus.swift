/// Where a stored incident stands at an instant. The three states are disjoint and cover every
/// incident, so `active + ended + cleared = total` (`incidents stats`); `list` shows the state in
/// its STATUS column. Derived from the one definition of active, ``StoredIncident/isActive(at:)``.
public enum IncidentStatus: String, CaseIterable, Sendable {
    /// Still listed by its source and not ended by the provider.
    case active
    /// Still listed by its source (`cleared_at` empty), but the provider's own end time
    /// (`ended_at`) has passed.
    case ended
    /// No longer listed by a complete poll of its source (`cleared_at` set), whatever `ended_at` says.
    case cleared
}

extension StoredIncident {
    /// The incident's state at `now`: ``IncidentStatus/active`` exactly when
    /// ``isActive(at:)``; otherwise cleared when the store cleared it, else ended by the provider.
    public func status(at now: UTCInstant) -> IncidentStatus {
        if isActive(at: now) { return .active }
        return clearedAt == nil ? .ended : .cleared
    }
}

extension IncidentStatistics {
    /// Incidents still listed whose provider end time has passed (``IncidentStatus/ended``):
    /// what is neither active nor cleared, as the three states are disjoint.
    public var ended: Int { total - active - cleared }
}
