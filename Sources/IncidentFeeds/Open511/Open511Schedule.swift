import IncidentCore

/// When an Open511 event's schedule starts and ends, in UTC.
///
/// - `intervals` (ISO 8601 `start/end`, open-ended `start/`): instants with `Z` or an offset,
///   or without a zone, which are read as UTC (DriveBC writes them so: its interval
///   `2023-05-24T16:00/2023-07-27T22:00` is described as "Until Thu Jul 27 at 3:00 PM PDT"),
///   to the minute or the second.
/// - `recurring_schedules` (dates, daily times and ISO weekdays in the jurisdiction's local
///   time, read in `zone`): the span runs from the start of the **first** occurrence (the first
///   listed weekday on or after `start_date`, at `daily_start_time`, else midnight) to the end
///   of the last one (the last listed weekday on or before `end_date`, at `daily_end_time`,
///   the next day when that is not after the start time, else the next midnight). The first
///   occurrence rather than the current one: the reader has no clock, and a start that moved
///   every day would make a new revision of the incident at each poll.
///
/// Several intervals or schedules: the earliest start and the latest end; the end is open
/// (nil) when any part is open-ended.
struct Open511Schedule: Equatable {
    var start: UTCInstant?
    var end: UTCInstant?

    /// - Throws: ``RecordProblem`` naming the value that cannot be read.
    init(intervals: [String], recurring: [Open511Event.RecurringSchedule], zone: ProviderZone) throws(RecordProblem) {
        var starts: [UTCInstant] = []
        var ends: [UTCInstant] = []
        var openEnded = false
        for interval in intervals {
            let parts = interval.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, let start = Self.instant(parts[0]) else {
                throw RecordProblem(text: "schedule interval '\(interval)' is not an ISO 8601 start/end")
            }
            starts.append(start)
            if parts[1].allSatisfy(\.isWhitespace) {
                openEnded = true
            } else if let end = Self.instant(parts[1]) {
                ends.append(end)
            } else {
                throw RecordProblem(text: "schedule interval '\(interval)' has an end that is not an ISO 8601 time")
            }
        }
        for schedule in recurring {
            let span = try Self.span(of: schedule, zone: zone)
            starts.append(span.start)
            if let end = span.end { ends.append(end) } else { openEnded = true }
        }
        start = starts.min()
        end = openEnded ? nil : ends.max()
    }

    static func instant(_ text: Substring) -> UTCInstant? {
        UTCInstant(iso8601: String(text), utcOffsetSeconds: 0)
    }

    static func span(of schedule: Open511Event.RecurringSchedule, zone: ProviderZone) throws(RecordProblem) -> (start: UTCInstant, end: UTCInstant?) {
        func date(_ text: String?, _ name: String) throws(RecordProblem) -> UTCInstant? {
            guard let text else { return nil }
            guard text.utf8.count == 10, let midnight = UTCInstant(iso8601: text, utcOffsetSeconds: 0) else {
                throw RecordProblem(text: "recurring schedule \(name) '\(text)' is not a date (yyyy-MM-dd)")
            }
            return midnight
        }
        func time(_ text: String?, _ name: String) throws(RecordProblem) -> Int64? {
            guard let text else { return nil }
            let parts = text.split(separator: ":")
            guard (2...3).contains(parts.count), let hours = Int64(parts[0]), let minutes = Int64(parts[1]),
                  parts.count == 2 || Int64(parts[2]).map({ (0...59).contains($0) }) == true,
                  (0...23).contains(hours) || (hours == 24 && minutes == 0), (0...59).contains(minutes) else {
                throw RecordProblem(text: "recurring schedule \(name) '\(text)' is not a time (HH:mm)")
            }
            return hours * 3600 + minutes * 60 + (parts.count == 3 ? Int64(parts[2]) ?? 0 : 0)
        }
        var weekdays: Set<Int> = []
        for day in schedule.days {
            guard let number = Int(day), (1...7).contains(number) else {
                throw RecordProblem(text: "recurring schedule day '\(day)' is not an ISO weekday (1 = Monday … 7 = Sunday)")
            }
            weekdays.insert(number)
        }
        guard let firstDate = try date(schedule.startDate, "start_date") else {
            throw RecordProblem(text: "a recurring schedule has no start_date")
        }
        let lastDate = try date(schedule.endDate, "end_date")
        let startTime = try time(schedule.dailyStartTime, "daily_start_time") ?? 0
        let endTime = try time(schedule.dailyEndTime, "daily_end_time")
        let day: Int64 = 86_400
        /// The ISO weekday (1 = Monday) of a wall-clock midnight; 1970-01-01 was a Thursday.
        func weekday(_ midnight: UTCInstant) -> Int {
            let days = midnight.secondsSince1970 >= 0 ? midnight.secondsSince1970 / day : (midnight.secondsSince1970 - day + 1) / day
            return Int(((days + 3) % 7 + 7) % 7) + 1
        }
        func listed(_ midnight: UTCInstant) -> Bool { weekdays.isEmpty || weekdays.contains(weekday(midnight)) }
        // The first listed day on or after start_date, the last on or before end_date (when the
        // range holds no listed day, the dates themselves).
        var first = firstDate
        while !listed(first), first.secondsSince1970 - firstDate.secondsSince1970 < 6 * day { first = first.adding(seconds: day) }
        if !listed(first) || (lastDate.map { first > $0 } ?? false) { first = firstDate }
        let start = zone.instant(showing: first.adding(seconds: startTime))
        guard let lastDate else { return (start, nil) }
        var last = lastDate
        while !listed(last), lastDate.secondsSince1970 - last.secondsSince1970 < 6 * day, last > first { last = last.adding(seconds: -day) }
        if !listed(last) { last = lastDate }
        let endOffset = endTime.map { $0 > startTime ? $0 : $0 + day } ?? day
        return (start, zone.instant(showing: last.adding(seconds: endOffset)))
    }
}
