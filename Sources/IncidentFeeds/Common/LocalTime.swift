import IncidentCore

/// The wall-clock layouts Korean providers document for local times. The parser accepts the
/// variants they are seen to send besides (see ``UTCInstant/init(local:layout:utcOffsetSeconds:)``);
/// the layout names the documented form in error messages.
public enum LocalTimeLayout: Sendable {
    /// `yyyy-MM-dd HH:mm:ss` (Gyeonggi GITS).
    case dashed
    /// `yyyyMMddHHmmss` (national ITS).
    case compact

    /// The documented pattern, for messages.
    public var pattern: String {
        switch self {
        case .dashed: "yyyy-MM-dd HH:mm:ss"
        case .compact: "yyyyMMddHHmmss"
        }
    }
}

extension UTCInstant {
    /// Korea Standard Time, UTC+9, no daylight saving time (source: Korean Standard Time Act;
    /// DST was last observed in 1988).
    public static let koreaUTCOffsetSeconds = 9 * 3600

    /// Parses a provider's local wall-clock time at a fixed UTC offset.
    ///
    /// Accepted, whatever `layout` the provider documents (each seen from Korean APIs or
    /// their Java back ends):
    /// - the date `yyyy-MM-dd` then a space or `T`, or the compact date `yyyyMMdd`;
    /// - the time `HH:mm:ss` or `HH:mm` (after a dashed date), `HHmmss` or `HHmm` (compact);
    /// - a fraction of a second of any length (`.0` from `java.sql.Timestamp.toString()`,
    ///   `.000`, `.123456`), truncated to the second;
    /// - an explicit zone (`Z`, `+09:00`, `+0900`), which then replaces `utcOffsetSeconds`;
    /// - spaces around the value.
    ///
    /// Returns nil for anything else (a date alone, a field out of range, other characters).
    public init?(local text: String, layout: LocalTimeLayout, utcOffsetSeconds: Int) {
        var copy = text
        guard let parsed = copy.withUTF8({ bytes -> UTCInstant? in
            var scanner = LocalTimeScanner(bytes: bytes)
            return scanner.instant(defaultOffset: utcOffsetSeconds)
        }) else { return nil }
        self = parsed
    }

    /// Parses an ISO 8601 time as the international standards write them (DATEX II, Open511,
    /// WZDx): RFC 3339 (`2023-05-31T13:17:00Z`, `…-08:00`, fractions of any length), and the
    /// variants they are seen with: no seconds (`2023-05-31T13:17Z`), no zone
    /// (`2021-04-26T15:19`, read at `utcOffsetSeconds`, the provider's configured zone), or a
    /// date alone (`2023-05-31`: its midnight at `utcOffsetSeconds`).
    ///
    /// Returns nil for anything else.
    public init?(iso8601 text: String, utcOffsetSeconds: Int) {
        var copy = text
        guard let parsed = copy.withUTF8({ bytes -> UTCInstant? in
            var scanner = LocalTimeScanner(bytes: bytes, allowsDateAlone: true)
            return scanner.instant(defaultOffset: utcOffsetSeconds)
        }) else { return nil }
        self = parsed
    }
}

/// A one-pass scanner over the UTF-8 bytes of a local time value.
private struct LocalTimeScanner {
    let bytes: UnsafeBufferPointer<UInt8>
    /// A dashed date with nothing after it is its midnight.
    let allowsDateAlone: Bool
    var index = 0

    init(bytes: UnsafeBufferPointer<UInt8>, allowsDateAlone: Bool = false) {
        self.bytes = bytes
        self.allowsDateAlone = allowsDateAlone
    }

    mutating func instant(defaultOffset: Int) -> UTCInstant? {
        skipSpaces()
        guard let year = digits(4) else { return nil }
        let month: Int, day: Int, hour: Int, minute: Int
        var second = 0
        if accept(UInt8(ascii: "-")) {
            guard let m = digits(2), accept(UInt8(ascii: "-")), let d = digits(2) else { return nil }
            if allowsDateAlone {
                var end = index
                while end < bytes.count, bytes[end] == UInt8(ascii: " ") { end += 1 }
                if end == bytes.count {
                    return UTCInstant(localYear: year, month: m, day: d, hour: 0, minute: 0, second: 0, utcOffsetSeconds: defaultOffset)
                }
            }
            guard accept(UInt8(ascii: "T")) || accept(UInt8(ascii: "t")) || accept(UInt8(ascii: " ")) else { return nil }
            while accept(UInt8(ascii: " ")) {}
            guard let h = digits(2), accept(UInt8(ascii: ":")), let mi = digits(2) else { return nil }
            if accept(UInt8(ascii: ":")) {
                guard let s = digits(2) else { return nil }
                second = s
            }
            (month, day, hour, minute) = (m, d, h, mi)
        } else {
            guard let m = digits(2), let d = digits(2), let h = digits(2), let mi = digits(2) else { return nil }
            if let s = digits(2) { second = s }
            (month, day, hour, minute) = (m, d, h, mi)
        }
        if accept(UInt8(ascii: ".")) {
            var count = 0
            while digits(1) != nil { count += 1 }
            guard count > 0 else { return nil }
        }
        var offset = defaultOffset
        if accept(UInt8(ascii: "Z")) || accept(UInt8(ascii: "z")) {
            offset = 0
        } else if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
            let sign = bytes[index] == UInt8(ascii: "-") ? -1 : 1
            index += 1
            guard let h = digits(2) else { return nil }
            _ = accept(UInt8(ascii: ":"))
            guard let m = digits(2), h <= 23, m <= 59 else { return nil }
            offset = sign * (h * 3600 + m * 60)
        }
        skipSpaces()
        guard index == bytes.count else { return nil }
        return UTCInstant(localYear: year, month: month, day: day, hour: hour, minute: minute, second: second,
                          utcOffsetSeconds: offset)
    }

    mutating func skipSpaces() {
        while index < bytes.count, bytes[index] == UInt8(ascii: " ") { index += 1 }
    }

    mutating func accept(_ byte: UInt8) -> Bool {
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        return true
    }

    /// The number in the next `count` bytes, all ASCII digits; nil (consuming nothing) otherwise.
    mutating func digits(_ count: Int) -> Int? {
        guard index + count <= bytes.count else { return nil }
        var value = 0
        for offset in 0..<count {
            let digit = bytes[index + offset] &- UInt8(ascii: "0")
            guard digit <= 9 else { return nil }
            value = value * 10 + Int(digit)
        }
        index += count
        return value
    }
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
