import IncidentCore

/// Maps a provider's Korean incident label to an ``IncidentCategory``.
///
/// Labels seen in the feeds: GITS `inciDesc` prefixes `[사고]`, `[차량고장]`, `[공사]`,
/// `[도로폐쇄]`, `[낙하물]`, `[기상]`; ITS `eventType` `교통사고`, `공사`, `작업`, `기상`,
/// `기타돌발` and `eventDetailType` `고장`, `작업`. Matching is by keyword containment, most
/// specific first, so `차량고장` and `고장` are both a breakdown and `교통사고` an accident.
public enum CategoryClassifier {
    /// Keywords in order of precedence.
    static let keywords: [(String, IncidentCategory)] = [
        ("폐쇄", .closure), ("통제", .closure), ("차단", .closure),
        ("사고", .accident), ("추돌", .accident), ("충돌", .accident), ("전복", .accident), ("화재", .accident),
        ("고장", .breakdown),
        ("공사", .roadwork), ("작업", .roadwork), ("보수", .roadwork), ("포장", .roadwork),
        ("낙하물", .obstruction), ("장애물", .obstruction), ("낙석", .obstruction), ("동물", .obstruction),
        ("기상", .weather), ("강설", .weather), ("폭설", .weather), ("결빙", .weather), ("안개", .weather),
        ("호우", .weather), ("폭우", .weather), ("강풍", .weather), ("침수", .weather),
        ("정체", .congestion), ("지정체", .congestion),
        ("행사", .event), ("집회", .event), ("시위", .event),
    ]

    static let keywordBytes: [([UInt8], IncidentCategory)] = keywords.map { (Array($0.0.utf8), $0.1) }

    /// The category of `label`, or nil when no keyword matches.
    public static func category(of label: String?) -> IncidentCategory? {
        guard var label else { return nil }
        // A plain search over UTF-8 bytes (exact for whole characters in valid UTF-8). It runs
        // for every record: Foundation's `contains` folds and normalizes Unicode per call and
        // the generic `firstRange(of:)` resolves metadata per call; each cost more than
        // parsing the whole record (callgrind, 30,000-record feed).
        return label.withUTF8 { text in keywordBytes.first { contains(text, $0.0) }?.1 }
    }

    static func contains(_ text: UnsafeBufferPointer<UInt8>, _ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, text.count >= needle.count else { return needle.isEmpty }
        for start in 0...(text.count - needle.count) where text[start] == needle[0] {
            var k = 1
            while k < needle.count && text[start + k] == needle[k] { k += 1 }
            if k == needle.count { return true }
        }
        return false
    }
}
