/// `incidents timeline` (docs/analyst.md, "History and changes"): how many incidents were active in
/// each hour or day, by the transition log.

/// The number of incidents active during one bucket, in one group.
public struct TimelineCount: Hashable, Sendable {
    /// When the bucket starts (a local hour or midnight).
    public var start: UTCInstant
    /// The bucket as local time: `2023-03-21 14` (an hour) or `2023-03-21` (a day).
    public var bucket: String
    /// The group's value (``IncidentGrouping``, `-` when the incident has none); nil without
    /// grouping.
    public var key: String?
    public var count: Int

    public init(start: UTCInstant, bucket: String, key: String?, count: Int) {
        self.start = start
        self.bucket = bucket
        self.key = key
        self.count = count
    }
}

public enum Timeline {
    /// The incidents matching `query` (its order and limit are ignored) that were active at some
    /// moment of each bucket of `size` from `since` to `until` (the buckets holding them, local
    /// times `utcOffset` seconds east of UTC): active from an appearance or a reopening until
    /// the next clear or the provider's end (as stored now), as ``IncidentQuery/listedAt``
    /// judges a moment. Without `field`, one count per bucket (zeros included); with it, one per
    /// bucket and value that has any, largest first, then by value.
    public static func count(_ reader: any IncidentReader, log: any ChangeFeedReader, matching query: IncidentQuery,
                             by field: IncidentGrouping?, per size: TimeBucket, since: UTCInstant, until: UTCInstant,
                             utcOffset: Int) throws -> [TimelineCount] {
        let step: Int64 = size == .hour ? 3600 : 86400
        let offset = Int64(utcOffset)
        func bucket(_ instant: UTCInstant) -> Int64 {
            let local = instant.secondsSince1970 + offset
            return (local >= 0 ? local / step : (local - step + 1) / step) * step - offset
        }
        let first = bucket(since), last = bucket(until.adding(seconds: -1))
        var all = query
        all.limit = nil
        all.order = .started
        var incidents: [Int64: (key: String?, endedAt: UTCInstant?)] = [:]
        try QueryIncidents(reader: reader).forEach(all) { stored in
            let local = stored.incident.startedAt.map { $0.adding(seconds: offset).rfc3339 }
            incidents[stored.id] = (field.map { GroupCounter.value(stored, $0, local: local, now: query.now) }, stored.incident.endedAt)
        }
        var counts: [Int64: [String?: Int]] = [:]
        // The last bucket the incident was counted in: intervals of one incident (cleared and
        // listed again within a bucket) count it once per bucket.
        var counted: (id: Int64, bucket: Int64)?
        func add(_ id: Int64, from start: UTCInstant, to end: UTCInstant?) {
            guard let incident = incidents[id] else { return }
            let stop = [end, incident.endedAt, until].compactMap { $0 }.min() ?? until
            guard start < stop, stop > since else { return }
            var b = max(bucket(start), first)
            if let counted, counted.id == id { b = max(b, counted.bucket + step) }
            while b <= last && b < stop.secondsSince1970 {
                counts[b, default: [:]][incident.key, default: 0] += 1
                counted = (id, b)
                b += step
            }
        }
        try forEachListedInterval(log, through: until, add)
        var result: [TimelineCount] = []
        for b in stride(from: first, through: last, by: Int(step)) {
            let start = UTCInstant(secondsSince1970: b)
            let label = GroupCounter.localText(start.adding(seconds: offset).rfc3339, size)
            guard let groups = counts[b] else {
                if field == nil { result.append(TimelineCount(start: start, bucket: label, key: nil, count: 0)) }
                continue
            }
            result += groups.map { TimelineCount(start: start, bucket: label, key: $0.key, count: $0.value) }.sorted {
                $0.count != $1.count ? $0.count > $1.count : ($0.key ?? "").utf8.lexicographicallyPrecedes(($1.key ?? "").utf8)
            }
        }
        return result
    }

    /// Calls `interval` for each interval in which an incident was listed as active by the log
    /// entries at or before `instant`: from an appearance or a reopening to the next clear (nil
    /// while none followed), by incident id, then time. Whether an instant is in `from..<until`
    /// is what ``IncidentQuery/listedAt`` judges from the same entries; the provider's end (as
    /// stored now) is left to the caller, which holds the incident.
    public static func forEachListedInterval(_ log: any ChangeFeedReader, through instant: UTCInstant,
                                             _ interval: (_ id: Int64, _ from: UTCInstant, _ until: UTCInstant?) throws -> Void) throws {
        var current: (id: Int64, since: UTCInstant?)?
        try log.forEachLifecycleEntry(through: instant) { id, kind, at in
            if current?.id != id {
                if let open = current, let start = open.since { try interval(open.id, start, nil) }
                current = (id, nil)
            }
            switch kind {
            case .appeared, .reopened:
                if current?.since == nil { current?.since = at }
            case .cleared:
                if let start = current?.since { try interval(id, start, at) }
                current?.since = nil
            default: break
            }
        }
        if let open = current, let start = open.since { try interval(open.id, start, nil) }
    }
}
