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

    /// The category of `label`, or nil when no keyword matches.
    public static func category(of label: String?) -> IncidentCategory? {
        guard let label else { return nil }
        return keywords.first { label.contains($0.0) }?.1
    }
}
