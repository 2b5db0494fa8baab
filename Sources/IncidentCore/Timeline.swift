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
    /// value. The store counts (``TimelineCounter``): it reads the listed intervals of the
    /// window, never every incident or entry of the log.
    public static func count(_ counter: any TimelineCounter, matching query: IncidentQuery,
                             by field: IncidentGrouping?, per size: TimeBucket, since: UTCInstant, until: UTCInstant,
                             offsetAt: (UTCInstant) -> Int) throws -> [TimelineCount] {
        let buckets = TimelineBuckets(starts: bucketStarts(per: size, since: since, until: until, offsetAt: offsetAt),
                                      since: since.secondsSince1970, until: until.secondsSince1970)
        // Each group's count in each bucket: the sum of its steps up to the bucket.
        var steps: [String?: [Int]] = [:]
        for step in try counter.timelineSteps(matching: query, by: field, buckets: buckets) where step.bucket < buckets.starts.count {
            steps[step.key, default: Array(repeating: 0, count: buckets.starts.count)][step.bucket] += step.change
        }
        var counts: [[String?: Int]] = Array(repeating: [:], count: buckets.starts.count)
        for (key, changes) in steps {
            var count = 0
            for (b, change) in changes.enumerated() {
                count += change
                if count != 0 { counts[b][key] = count }
            }
        }
        var result: [TimelineCount] = []
        for (b, seconds) in buckets.starts.enumerated() {
            let start = UTCInstant(secondsSince1970: seconds)
            let label = GroupCounter.localText(start.adding(seconds: Int64(offsetAt(start))).rfc3339, size)
            guard !counts[b].isEmpty else {
                if field == nil { result.append(TimelineCount(start: start, bucket: label, key: nil, count: 0)) }
                continue
            }
            result += counts[b].map { TimelineCount(start: start, bucket: label, key: $0.key, count: $0.value) }.sorted {
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

/// The buckets of a timeline: their starts (seconds since 1970, ascending; the first at or
/// before `since`), counted from `since` to `until` (excluded).
public struct TimelineBuckets: Sendable, Equatable {
    public var starts: [Int64]
    public var since: Int64
    public var until: Int64

    public init(starts: [Int64], since: Int64, until: Int64) {
        self.starts = starts
        self.since = since
        self.until = until
    }

    /// A SQL expression (the same text for both stores) of the index in ``starts`` of the
    /// bucket holding `seconds`, an integer expression of seconds since `epoch` (seconds since
    /// 1970) from `since` to before `until`. Consecutive buckets of one length (an hour; a day
    /// but those of 23 or 25 hours) are one run, found by division, so the expression has a
    /// branch per run, not per bucket.
    public func indexSQL(of seconds: String, epoch: Int64) -> String {
        // (first bucket, its start, the length of each bucket of the run)
        var runs: [(first: Int, start: Int64, length: Int64)] = []
        for (b, start) in starts.enumerated() {
            let isLast = b + 1 == starts.count
            let length = isLast ? max(until - start, 1) : starts[b + 1] - start
            // The last bucket, cut by `until`, continues a run of buckets at least as long.
            if let run = runs.last, isLast ? length <= run.length : length == run.length { continue }
            runs.append((b, start, length))
        }
        func branch(_ run: (first: Int, start: Int64, length: Int64)) -> String {
            "\(run.first) + (\(seconds) - \(run.start - epoch)) / \(run.length)"
        }
        guard let last = runs.last else { return "0" }
        if runs.count == 1 { return branch(last) }
        return "CASE " + zip(runs, runs.dropFirst()).map { run, next in "WHEN \(seconds) < \(next.start - epoch) THEN \(branch(run)) " }.joined()
            + "ELSE \(branch(last)) END"
    }
}

/// A change of a timeline's count: at bucket `bucket` (an index in ``TimelineBuckets/starts``)
/// the incidents of group `key` (nil without grouping) active at some moment of the bucket are
/// `change` more than in the bucket before (the first bucket's change is its count).
public struct TimelineStep: Hashable, Sendable {
    public var bucket: Int
    public var key: String?
    public var change: Int

    public init(bucket: Int, key: String?, change: Int) {
        self.bucket = bucket
        self.key = key
        self.change = change
    }
}

/// A store that counts a timeline itself (``Timeline/count(_:matching:by:per:since:until:offsetAt:)``).
public protocol TimelineCounter: Sendable {
    /// For the incidents matching `query`'s filters (not its order or limit), the steps of the
    /// number active at some moment of each bucket, per value of `field` (``GroupCounter``'s
    /// value: `-` for no road): active from an appearance or a reopening until the next clear
    /// (``IncidentQuery/listedAt``'s intervals) or the provider's end as stored now, within
    /// `buckets.since..<buckets.until`; an incident counts once in a bucket however many of
    /// its intervals touch it. Steps of zero may be left out; their order is any.
    func timelineSteps(matching query: IncidentQuery, by field: IncidentGrouping?, buckets: TimelineBuckets) throws -> [TimelineStep]
}
