/// A point in time with one-second resolution, independent of any time zone.
///
/// Stored and printed as RFC 3339 UTC text (`2023-03-21T05:13:00Z`, RFC 3339 §5.6). Provider
/// feeds give local wall-clock times; ``init(localYear:month:day:hour:minute:second:utcOffsetSeconds:)``
/// converts them with the provider's fixed offset (Korea Standard Time is UTC+9 with no daylight
/// saving time since 1988).
///
/// The calendar arithmetic is the proleptic Gregorian "days from civil" algorithm of
/// Howard Hinnant (<https://howardhinnant.github.io/date_algorithms.html>), which is exact for
/// every year 0...9999 and needs no Foundation calendar (it runs several million times per
/// large feed).
public struct UTCInstant: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Seconds since 1970-01-01T00:00:00Z.
    public var secondsSince1970: Int64

    public init(secondsSince1970: Int64) {
        self.secondsSince1970 = secondsSince1970
    }

    /// Converts a local wall-clock time at a fixed UTC offset to an instant.
    ///
    /// Returns nil when a field is out of range (month 13, February 30, hour 24, …).
    /// - Parameter utcOffsetSeconds: seconds east of UTC (Korea: 32_400).
    public init?(localYear year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int,
                 utcOffsetSeconds: Int) {
        guard (0...9999).contains(year), (1...12).contains(month),
              (1...Self.daysInMonth(year: year, month: month)).contains(day),
              (0...23).contains(hour), (0...59).contains(minute), (0...59).contains(second)
        else { return nil }
        let days = Self.daysFromCivil(year: year, month: month, day: day)
        let local = days * 86_400 + Int64(hour * 3600 + minute * 60 + second)
        self.secondsSince1970 = local - Int64(utcOffsetSeconds)
    }

    /// Parses RFC 3339 text: `YYYY-MM-DDTHH:MM:SS` followed by `Z` or `±HH:MM`, with optional
    /// fractional seconds (dropped: the resolution is one second). `t`/`z` and a space in place
    /// of `T` are accepted as RFC 3339 §5.6 allows. Returns nil for anything else.
    public init?(rfc3339 text: String) {
        guard let parsed = Self.withUTF8(text, { Self.parseRFC3339($0) }) else { return nil }
        self = parsed
    }

    /// Parses RFC 3339 text given as its UTF-8 bytes (a stored column read in place), as
    /// ``init(rfc3339:)`` does.
    public init?(rfc3339 bytes: UnsafeBufferPointer<UInt8>) {
        guard let parsed = Self.parseRFC3339(bytes) else { return nil }
        self = parsed
    }

    private static func parseRFC3339(_ b: UnsafeBufferPointer<UInt8>) -> UTCInstant? {
        guard b.count >= 20,
              let year = Self.digits(b, 0, 4), b[4] == UInt8(ascii: "-"),
              let month = Self.digits(b, 5, 2), b[7] == UInt8(ascii: "-"),
              let day = Self.digits(b, 8, 2),
              b[10] == UInt8(ascii: "T") || b[10] == UInt8(ascii: "t") || b[10] == UInt8(ascii: " "),
              let hour = Self.digits(b, 11, 2), b[13] == UInt8(ascii: ":"),
              let minute = Self.digits(b, 14, 2), b[16] == UInt8(ascii: ":"),
              let second = Self.digits(b, 17, 2)
        else { return nil }
        var i = 19
        if i < b.count, b[i] == UInt8(ascii: ".") {
            i += 1
            let start = i
            while i < b.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(b[i]) { i += 1 }
            guard i > start else { return nil }
        }
        guard i < b.count else { return nil }
        let offset: Int
        switch b[i] {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            guard i + 1 == b.count else { return nil }
            offset = 0
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            guard i + 6 == b.count, let oh = Self.digits(b, i + 1, 2), b[i + 3] == UInt8(ascii: ":"),
                  let om = Self.digits(b, i + 4, 2), oh < 24, om < 60 else { return nil }
            offset = (oh * 3600 + om * 60) * (b[i] == UInt8(ascii: "-") ? -1 : 1)
        default:
            return nil
        }
        return UTCInstant(localYear: year, month: month, day: day, hour: hour, minute: minute,
                          second: second, utcOffsetSeconds: offset)
    }

    /// Runs `body` over the UTF-8 bytes of `text` without copying them when the string is
    /// native (the usual case), else over a copy.
    static func withUTF8<R>(_ text: String, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        var text = text
        return text.withUTF8(body)
    }

    /// RFC 3339 UTC text, e.g. `2023-03-21T05:13:00Z`.
    public var rfc3339: String {
        String(unsafeUninitializedCapacity: 20) { out in
            writeRFC3339(into: out)
            return 20
        }
    }

    /// Writes the 20 bytes of ``rfc3339`` into `out` (which must hold at least 20), without
    /// allocating: storing a large feed formats millions of instants.
    public func writeRFC3339(into out: UnsafeMutableBufferPointer<UInt8>) {
        precondition(out.count >= 20, "an RFC 3339 UTC instant takes 20 bytes")
        let days = secondsSince1970 >= 0 ? secondsSince1970 / 86_400 : (secondsSince1970 - 86_399) / 86_400
        let secondOfDay = Int(secondsSince1970 - days * 86_400)
        let (y, m, d) = Self.civilFromDays(days)
        func put(_ value: Int, _ width: Int, at offset: Int) {
            var v = value
            for k in stride(from: offset + width - 1, through: offset, by: -1) {
                out[k] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: v % 10)
                v /= 10
            }
        }
        put(y, 4, at: 0); out[4] = UInt8(ascii: "-")
        put(m, 2, at: 5); out[7] = UInt8(ascii: "-")
        put(d, 2, at: 8); out[10] = UInt8(ascii: "T")
        put(secondOfDay / 3600, 2, at: 11); out[13] = UInt8(ascii: ":")
        put(secondOfDay / 60 % 60, 2, at: 14); out[16] = UInt8(ascii: ":")
        put(secondOfDay % 60, 2, at: 17); out[19] = UInt8(ascii: "Z")
    }

    public var description: String { rfc3339 }

    public static func < (lhs: UTCInstant, rhs: UTCInstant) -> Bool {
        lhs.secondsSince1970 < rhs.secondsSince1970
    }

    /// The instant `seconds` later (negative: earlier).
    public func adding(seconds: Int64) -> UTCInstant {
        UTCInstant(secondsSince1970: secondsSince1970 + seconds)
    }

    // MARK: Calendar arithmetic (Hinnant)

    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = Int64((month + 9) % 12)
        let doy = (153 * mp + 2) / 5 + Int64(day) - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    static func civilFromDays(_ days: Int64) -> (Int, Int, Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        let y = yoe + era * 400 + (m <= 2 ? 1 : 0)
        return (Int(y), Int(m), Int(d))
    }

    static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Decimal digits `b[at..<at+count]` as an integer, or nil if any byte is not a digit.
    static func digits(_ b: UnsafeBufferPointer<UInt8>, _ at: Int, _ count: Int) -> Int? {
        guard at >= 0, at + count <= b.count else { return nil }
        var v = 0
        for k in at..<(at + count) {
            let c = b[k] &- UInt8(ascii: "0")
            guard c <= 9 else { return nil }
            v = v * 10 + Int(c)
        }
        return v
    }
}
