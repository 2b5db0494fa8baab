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
    /// hours or days of a zone whose offset east of UTC at an instant, in seconds, is
    /// `offsetAt`: a day of a zone with daylight saving time is 23 or 25 hours long): active
    /// from an appearance or a reopening until the next clear or the provider's end (as stored
    /// now), as ``IncidentQuery/listedAt`` judges a moment. Without `field`, one count per bucket
    /// (zeros included); with it, one per bucket and value that has any, largest first, then by
    /// value.
    public static func count(_ reader: any IncidentReader, log: any ChangeFeedReader, matching query: IncidentQuery,
                             by field: IncidentGrouping?, per size: TimeBucket, since: UTCInstant, until: UTCInstant,
                             offsetAt: (UTCInstant) -> Int) throws -> [TimelineCount] {
        let starts = bucketStarts(per: size, since: since, until: until, offsetAt: offsetAt)
        /// The index of the bucket holding `instant` (0 for one before the first).
        func index(_ instant: UTCInstant) -> Int {
            var low = 0, high = starts.count - 1
            while low < high {
                let middle = (low + high + 1) / 2
                if starts[middle] <= instant.secondsSince1970 { low = middle } else { high = middle - 1 }
            }
            return low
        }
        var all = query
        all.limit = nil
        all.order = .started
        var incidents: [Int64: (key: String?, endedAt: UTCInstant?)] = [:]
        try QueryIncidents(reader: reader).forEach(all) { stored in
            let local = stored.incident.startedAt.map { $0.adding(seconds: Int64(offsetAt($0))).rfc3339 }
            incidents[stored.id] = (field.map { GroupCounter.value(stored, $0, local: local, now: query.now) }, stored.incident.endedAt)
        }
        var counts: [Int: [String?: Int]] = [:]
        // The last bucket the incident was counted in: intervals of one incident (cleared and
        // listed again within a bucket) count it once per bucket.
        var counted: (id: Int64, bucket: Int)?
        func add(_ id: Int64, from start: UTCInstant, to end: UTCInstant?) {
            guard let incident = incidents[id] else { return }
            let stop = [end, incident.endedAt, until].compactMap { $0 }.min() ?? until
            guard start < stop, stop > since else { return }
            var b = index(start)
            if let counted, counted.id == id { b = max(b, counted.bucket + 1) }
            while b < starts.count && starts[b] < stop.secondsSince1970 {
                counts[b, default: [:]][incident.key, default: 0] += 1
                counted = (id, b)
                b += 1
            }
        }
        try forEachListedInterval(log, through: until, add)
        var result: [TimelineCount] = []
        for (b, seconds) in starts.enumerated() {
            let start = UTCInstant(secondsSince1970: seconds)
            let label = GroupCounter.localText(start.adding(seconds: Int64(offsetAt(start))).rfc3339, size)
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

    /// The starts (seconds since 1970, UTC) of the local hours or days from the one holding
    /// `since` to the one holding the last second before `until`, in a zone whose offset at an
    /// instant is `offsetAt`. A local start is found from the offset in force there; when clocks
    /// go back, the repeated hour is a bucket of its own (same label, its own start).
    public static func bucketStarts(per size: TimeBucket, since: UTCInstant, until: UTCInstant,
                                    offsetAt: (UTCInstant) -> Int) -> [Int64] {
        let step: Int64 = size == .hour ? 3600 : 86400
        func start(holding seconds: Int64) -> Int64 {
            let local = seconds + Int64(offsetAt(UTCInstant(secondsSince1970: seconds)))
            let floored = (local >= 0 ? local / step : (local - step + 1) / step) * step
            let guess = floored - Int64(offsetAt(UTCInstant(secondsSince1970: seconds)))
            return floored - Int64(offsetAt(UTCInstant(secondsSince1970: guess)))
        }
        var starts = [start(holding: since.secondsSince1970)]
        while let last = starts.last, last < until.secondsSince1970 {
            // Half a step past the next start: a day of 23 or 25 hours still lands in the next day.
            let next = start(holding: last + step + step / 2)
            guard next > last, next < until.secondsSince1970 else { break }
            starts.append(next)
        }
        return starts
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
