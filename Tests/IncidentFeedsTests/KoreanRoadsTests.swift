@testable import IncidentFeeds
import Testing

@Suite("Canonical Korean roads (issue 14.10)")
struct KoreanRoadsTests {
    static let sameRoad: [(String?, String?, String?, String)] = [
        ("경부고속도로", nil, nil, "고속국도1호선"),  // GITS inciPlace1
        ("경부선", "고속도로", "1", "고속국도1호선"),          // ITS roadName, type, roadNo
        ("경부선", nil, nil, "고속국도1호선"),
        (nil, "국도", "6", "국도6호선"),              // ITS: empty roadName, roadNo 6
        ("6", "국도", "6", "국도6호선"),
        ("국도1호선", nil, nil, "국도1호선"),                 // GITS
        ("국도 1호선", nil, nil, "국도1호선"),
        ("일반국도 제77호선", nil, nil, "국도77호선"),
        ("지방도23호선", nil, nil, "지방도23호선"),
        ("서해안고속도로", nil, nil, "고속국도15호선"),
        ("제2중부고속도로", nil, nil, "고속국도37호선"),
        ("중부고속도로", nil, nil, "고속국도35호선"),
        ("서울외곽순환고속도로", nil, nil, "고속국도100호선"),
        ("영동선", "고속도로", "50", "고속국도50호선"),
        ("경부 고속도로", nil, nil, "고속국도1호선"),             // whitespace inside, as typed
        ("\t88올림픽고속국도 ", nil, nil, "고속국도12호선"),      // the second name of a route, another suffix
    ]

    @Test("the same road from every provider has one canonical name", arguments: sameRoad)
    func canonical(name: String?, roadClass: String?, number: String?, expected: String) {
        #expect(KoreanRoads.canonical(name: name, roadClass: roadClass, number: number) == expected)
    }

    @Test("city streets and unknown roads have none", arguments: ["강변북로", "올림픽대로", "국도", "국도호선", "국도0호선", "경부", "", " \t", "Main St"])
    func none(name: String) {
        #expect(KoreanRoads.canonical(name: name) == nil)
    }

    @Test("query terms that name a road find it by its canonical name", arguments: [
        ("경부고속도로", "고속국도1호선"), ("경부선", "고속국도1호선"), ("국도6", "국도6호선"), ("국도 6호선", "국도6호선"),
    ])
    func query(term: String, expected: String) {
        #expect(KoreanRoads.canonical(query: term) == expected)
    }
}
