import IncidentCore

extension IncidentFilter.ParsingContext {
    /// How every front end reads filters (the CLI's `--road`, `--since`; a server's query
    /// parameters): local times written as GITS writes them (`2023-03-21 14:13:00`,
    /// ``UTCInstant/init(local:layout:utcOffsetSeconds:)``) placed by `instantShowing` (a
    /// time zone's rule: the instant at which its clocks show those fields read as UTC; UTC by
    /// default), and roads named as ``KoreanRoads/canonical(query:)`` knows them.
    public static func standard(now: UTCInstant,
                                instantShowing: @escaping @Sendable (UTCInstant) -> UTCInstant? = { $0 }) -> Self {
        Self(now: now, wallClock: { text in UTCInstant(local: text, layout: .dashed, utcOffsetSeconds: 0).flatMap(instantShowing) },
             canonicalRoad: { KoreanRoads.canonical(query: $0) })
    }
}
