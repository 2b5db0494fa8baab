import IncidentCore

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
    public init?(local text: String, layout: LocalTimeLayout, utcOffsetSeconds: Int) {
        var copy = text
        guard let parsed = copy.withUTF8({ Self.parseLocal($0, layout: layout, utcOffsetSeconds: utcOffsetSeconds) })
        else { return nil }
        self = parsed
    }

    private static func parseLocal(_ all: UnsafeBufferPointer<UInt8>, layout: LocalTimeLayout,
                                   utcOffsetSeconds: Int) -> UTCInstant? {
        var start = 0
        var end = all.count
        while start < end, all[start] == UInt8(ascii: " ") { start += 1 }
        while end > start, all[end - 1] == UInt8(ascii: " ") { end -= 1 }
        let b = UnsafeBufferPointer(rebasing: all[start..<end])
        switch layout {
        case .dashed:
            guard b.count == 19, b[4] == UInt8(ascii: "-"), b[7] == UInt8(ascii: "-"),
                  b[10] == UInt8(ascii: " "), b[13] == UInt8(ascii: ":"), b[16] == UInt8(ascii: ":"),
                  let y = localDigits(b, 0, 4), let mo = localDigits(b, 5, 2), let d = localDigits(b, 8, 2),
                  let h = localDigits(b, 11, 2), let mi = localDigits(b, 14, 2), let s = localDigits(b, 17, 2)
            else { return nil }
            return UTCInstant(localYear: y, month: mo, day: d, hour: h, minute: mi, second: s,
                              utcOffsetSeconds: utcOffsetSeconds)
        case .compact:
            guard b.count == 14,
                  let y = localDigits(b, 0, 4), let mo = localDigits(b, 4, 2), let d = localDigits(b, 6, 2),
                  let h = localDigits(b, 8, 2), let mi = localDigits(b, 10, 2), let s = localDigits(b, 12, 2)
            else { return nil }
            return UTCInstant(localYear: y, month: mo, day: d, hour: h, minute: mi, second: s,
                              utcOffsetSeconds: utcOffsetSeconds)
        }
    }
}

/// The decimal number in `b[at..<at+count]`, or nil when a byte is not a digit.
private func localDigits(_ b: UnsafeBufferPointer<UInt8>, _ at: Int, _ count: Int) -> Int? {
    var v = 0
    for i in at..<at + count {
        let c = b[i] &- UInt8(ascii: "0")
        guard c <= 9 else { return nil }
        v = v * 10 + Int(c)
    }
    return v
}

extension UTCInstant {
    /// The next midnight in Korea (UTC+9) after this instant, when daily quotas of Korean
    /// public APIs reset (data.go.kr: "일일 트래픽은 매일 자정에 초기화").
    public var nextKoreaMidnight: UTCInstant {
        let offset = Int64(UTCInstant.koreaUTCOffsetSeconds)
        let local = secondsSince1970 + offset
        let day = local >= 0 ? local / 86_400 : (local - 86_399) / 86_400
        return UTCInstant(secondsSince1970: (day + 1) * 86_400 - offset)
    }
}
