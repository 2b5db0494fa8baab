import IncidentCore

/// Canonical names of Korean roads from the public route numbering, so that the same road
/// matches across providers: GITS says `경부고속도로`, ITS says `경부선` (type 고속도로, roadNo 1),
/// both are `고속국도1호선`; an ITS item with an empty roadName and roadNo 6 on a national road is
/// `국도6호선`.
///
/// Source: the Ministry of Land's 「고속국도 등 도로 노선번호 및 노선명 관리지침」 as reported by
/// 중앙일보 (2019-04-19, "노선번호의 비밀"; 2001: east–west expressways even from 10 (남해) to 50
/// (영동), north–south odd from 15 (서해안) to 65 (동해), 경부 kept as 1; 88올림픽 → 12, 제2중부
/// → 37; ring roads by postal code: 100 수도권제1순환, 300 대전남부순환, 600 부산외곽순환).
/// Only routes whose number is settled are listed; others keep just the provider's name.
public enum KoreanRoads {
    /// Expressway numbers by the names (and short `…선` forms) providers use.
    static let expressways: [(number: Int, names: [String])] = [
        (1, ["경부"]), (10, ["남해"]), (12, ["광주대구", "88올림픽"]), (15, ["서해안"]), (16, ["울산"]),
        (20, ["새만금포항", "익산포항"]), (25, ["호남", "논산천안"]), (27, ["순천완주"]), (30, ["당진영덕", "당진대전", "상주영덕"]),
        (35, ["통영대전", "중부", "대전통영"]), (37, ["제2중부"]), (40, ["평택제천"]), (45, ["중부내륙"]), (50, ["영동"]),
        (52, ["광주원주", "제2영동"]), (55, ["중앙"]), (60, ["서울양양"]), (65, ["동해"]),
        (100, ["수도권제1순환", "서울외곽순환"]), (110, ["제2경인"]), (120, ["경인"]), (130, ["인천국제공항"]),
        (300, ["대전남부순환"]), (400, ["수도권제2순환"]), (600, ["부산외곽순환"]), (700, ["대구외곽순환"]),
    ]

    /// The canonical road for what a provider sent: its road name, and where it gives them the
    /// road class (ITS `type`: 고속도로, 국도, 지방도) and route number (ITS `roadNo`). Nil when
    /// the road has no number (a city street such as 강변북로) or is not known.
    public static func canonical(name: String?, roadClass: String? = nil, number: String? = nil) -> String? {
        if let number = number.flatMap({ Int($0.trimmingCharacters(in: .whitespaces)) }), number > 0,
           let prefix = classPrefix(roadClass) {
            return "\(prefix)\(number)호선"
        }
        guard var name, !name.isEmpty else { return nil }
        // A Character is whitespace when its first scalar is: no whitespace scalar, nothing to remove.
        if name.unicodeScalars.contains(where: \.properties.isWhitespace) {
            name = name.filter { !$0.isWhitespace }
            if name.isEmpty { return nil }
        }
        return expresswayNames[name] ?? numberedRoute(name)
    }

    /// Every form of an expressway's name providers use (`경부고속도로`, `경부선`, `경부고속국도`)
    /// and its canonical name, made once: one hash lookup per record. (Building and comparing
    /// the forms of every expressway for each record was 11.6 % of a fresh GITS ingest's CPU and
    /// 27 % of an unchanged re-ingest's; issue 23.)
    static let expresswayNames: [String: String] = {
        var table: [String: String] = [:]
        for (number, names) in expressways {
            for name in names {
                for form in [name + "고속도로", name + "선", name + "고속국도"] where table[form] == nil {
                    table[form] = "고속국도\(number)호선"
                }
            }
        }
        return table
    }()

    /// The canonical road a query term names, when it names one (`경부고속도로`, `경부선`,
    /// `국도 6호선`, `고속국도1호선`): `--road` then also finds the incidents whose providers
    /// call the road otherwise.
    public static func canonical(query: String) -> String? {
        canonical(name: query)
    }

    /// `국도6호선`, `지방도 23호선`, `고속국도 제1호선`, `국도6`: a class word then a number.
    static func numberedRoute(_ name: String) -> String? {
        for (word, prefix) in [("고속국도", "고속국도"), ("고속도로", "고속국도"), ("일반국도", "국도"), ("국도", "국도"), ("지방도", "지방도")] {
            guard name.hasPrefix(word) else { continue }
            var rest = name.dropFirst(word.count)
            if rest.hasPrefix("제") { rest = rest.dropFirst() }
            let digits = rest.prefix(while: \.isASCII).prefix(while: \.isNumber)
            let tail = rest.dropFirst(digits.count)
            guard let number = Int(digits), number > 0, tail.isEmpty || tail == "호선" || tail == "호" || tail == "선" else { return nil }
            return "\(prefix)\(number)호선"
        }
        return nil
    }

    static func classPrefix(_ roadClass: String?) -> String? {
        switch roadClass?.filter({ !$0.isWhitespace }) {
        case "고속도로", "고속국도", "ex": "고속국도"
        case "국도", "일반국도", "its": "국도"
        case "지방도", "국가지원지방도", "loc": "지방도"
        default: nil
        }
    }
}
