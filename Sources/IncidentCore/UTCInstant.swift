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
    public init?(rfc3339 text: some StringProtocol) {
        let b = Array(text.utf8)
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
        self.init(localYear: year, month: month, day: day, hour: hour, minute: minute,
                  second: second, utcOffsetSeconds: offset)
    }

    /// RFC 3339 UTC text, e.g. `2023-03-21T05:13:00Z`.
    public var rfc3339: String {
        let days = secondsSince1970 >= 0 ? secondsSince1970 / 86_400 : (secondsSince1970 - 86_399) / 86_400
        let secondOfDay = Int(secondsSince1970 - days * 86_400)
        let (y, m, d) = Self.civilFromDays(days)
        var out = [UInt8]()
        out.reserveCapacity(20)
        func put(_ value: Int, width: Int) {
            var digits = [UInt8](repeating: UInt8(ascii: "0"), count: width)
            var v = value
            for k in stride(from: width - 1, through: 0, by: -1) {
                digits[k] = UInt8(ascii: "0") + UInt8(v % 10)
                v /= 10
            }
            out.append(contentsOf: digits)
        }
        put(y, width: 4); out.append(UInt8(ascii: "-"))
        put(m, width: 2); out.append(UInt8(ascii: "-"))
        put(d, width: 2); out.append(UInt8(ascii: "T"))
        put(secondOfDay / 3600, width: 2); out.append(UInt8(ascii: ":"))
        put(secondOfDay / 60 % 60, width: 2); out.append(UInt8(ascii: ":"))
        put(secondOfDay % 60, width: 2); out.append(UInt8(ascii: "Z"))
        return String(decoding: out, as: UTF8.self)
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
    static func digits(_ b: [UInt8], _ at: Int, _ count: Int) -> Int? {
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

/// Wall-clock layouts that providers use for local times.
public enum LocalTimeLayout: Sendable {
    /// `yyyy-MM-dd HH:mm:ss` (Gyeonggi GITS).
    case dashed
    /// `yyyyMMddHHmmss` (national ITS).
    case compact
}

extension UTCInstant {
    /// Korea Standard Time, UTC+9, no daylight saving time (source: Korean Standard Time Act;
    /// DST was last observed in 1988).
    public static let koreaUTCOffsetSeconds = 9 * 3600

    /// Parses a provider's local wall-clock time in `layout` at a fixed UTC offset.
    ///
    /// Leading and trailing spaces are ignored. Returns nil when the text does not match the
    /// layout exactly or a field is out of range.
    public init?(local text: some StringProtocol, layout: LocalTimeLayout, utcOffsetSeconds: Int) {
        var b = Array(text.utf8)
        while b.last == UInt8(ascii: " ") { b.removeLast() }
        if let first = b.firstIndex(where: { $0 != UInt8(ascii: " ") }), first > 0 { b.removeFirst(first) }
        let fields: (Int, Int, Int, Int, Int, Int)?
        switch layout {
        case .dashed:
            guard b.count == 19, b[4] == UInt8(ascii: "-"), b[7] == UInt8(ascii: "-"),
                  b[10] == UInt8(ascii: " "), b[13] == UInt8(ascii: ":"), b[16] == UInt8(ascii: ":"),
                  let y = Self.digits(b, 0, 4), let mo = Self.digits(b, 5, 2), let d = Self.digits(b, 8, 2),
                  let h = Self.digits(b, 11, 2), let mi = Self.digits(b, 14, 2), let s = Self.digits(b, 17, 2)
            else { return nil }
            fields = (y, mo, d, h, mi, s)
        case .compact:
            guard b.count == 14,
                  let y = Self.digits(b, 0, 4), let mo = Self.digits(b, 4, 2), let d = Self.digits(b, 6, 2),
                  let h = Self.digits(b, 8, 2), let mi = Self.digits(b, 10, 2), let s = Self.digits(b, 12, 2)
            else { return nil }
            fields = (y, mo, d, h, mi, s)
        }
        guard let (y, mo, d, h, mi, s) = fields else { return nil }
        self.init(localYear: y, month: mo, day: d, hour: h, minute: mi, second: s,
                  utcOffsetSeconds: utcOffsetSeconds)
    }
}
