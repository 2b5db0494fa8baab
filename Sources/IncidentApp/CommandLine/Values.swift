import IncidentCore

/// Parsers for the value types that options and the configuration file share, so a duration or
/// an instant is spelled the same way everywhere.
public enum ValueParsers {
    /// A duration: a positive whole number followed by `s`, `m`, `h` or `d` (`90s`, `15m`, `2h`,
    /// `7d`). Returns seconds.
    /// - Throws: ``UsageError`` saying what is accepted.
    public static func duration(_ text: String) throws -> Int64 {
        let units: [Character: Int64] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
        guard let unit = text.last, let factor = units[unit], let count = Int64(text.dropLast()), count > 0,
              count <= Int64.max / factor / 1000
        else {
            throw UsageError("'\(text)' is not a duration (a whole number followed by s, m, h or d: 90s, 15m, 2h, 7d)")
        }
        return count * factor
    }

    /// Formats seconds the way ``duration(_:)`` reads them (largest exact unit).
    public static func durationText(_ seconds: Int64) -> String {
        for (unit, factor) in [("d", Int64(86_400)), ("h", 3600), ("m", 60)] where seconds % factor == 0 && seconds >= factor {
            return "\(seconds / factor)\(unit)"
        }
        return "\(seconds)s"
    }
}
