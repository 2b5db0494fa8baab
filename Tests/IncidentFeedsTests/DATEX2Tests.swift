import Foundation
import IncidentCore
@testable import IncidentFeeds
import IncidentNetworking
import TestSupport
import Testing

/// What a DATEX II reading gave: every record (incident or set aside) and the verdict.
struct DATEX2Reading: Equatable {
    enum Output: Equatable {
        case incident(Incident)
        case rejected(RejectedRecord)
    }
    var outputs: [Output] = []
    var verdict = ResponseVerdict.complete

    var incidents: [Incident] { outputs.compactMap { if case .incident(let i) = $0 { i } else { nil } } }
    var rejected: [RejectedRecord] { outputs.compactMap { if case .rejected(let r) = $0 { r } else { nil } } }

    static func output(_ record: FeedRecord) -> Output {
        switch record {
        case .incident(let incident): .incident(incident)
        case .rejected(let rejected): .rejected(rejected)
        }
    }

    /// Reads `file` through the provider (sniffing, the reading thread, the verdict).
    static func read(_ file: URL, options: ProviderOptionValues = ProviderOptionValues()) throws -> DATEX2Reading {
        var reading = DATEX2Reading()
        var definition = SourceDefinition(name: "datex", provider: "datex2")
        definition.options = options
        reading.verdict = try DATEX2Provider.read(file: file, contentType: nil, definition: definition) {
            reading.outputs.append(output($0))
        }
        return reading
    }

    /// Reads `bytes` with a new document reader, handed over in `pieces`.
    static func read(_ bytes: [UInt8], pieces: [Range<Int>]) throws -> DATEX2Reading {
        try Reader().read(bytes, pieces: pieces)
    }

    /// One document reader reused for many readings (compiling its schema costs more than
    /// reading a small sample in a debug build).
    final class Reader {
        private var outputs: [Output] = []
        private lazy var reader = DATEX2DocumentReader(settings: .init(), source: "datex") { [unowned self] in
            self.outputs.append(DATEX2Reading.output($0))
        }

        func read(_ bytes: [UInt8], pieces: [Range<Int>]) throws -> DATEX2Reading {
            outputs = []
            reader.reset()
            try bytes.withUnsafeBytes { raw in
                for range in pieces { try reader.parse(UnsafeRawBufferPointer(rebasing: raw[range])) }
            }
            let verdict = try reader.finish()
            return DATEX2Reading(outputs: outputs, verdict: verdict)
        }
    }
}

/// The recorded DATEX II publications in ../shared/feeds.
struct DATEX2Sample: Sendable, CustomTestStringConvertible {
    let path: String
    /// Why the verdict is incomplete; empty for a snapshot.
    let incompleteBecause: [String]
    /// The payload's publicationTime to the second (SOURCES.md gives each sample's).
    let publishedAt: String
    init(path: String, publishedAt: String, incompleteBecause: [String]) {
        self.path = path
        self.publishedAt = publishedAt
        self.incompleteBecause = incompleteBecause
    }
    var testDescription: String { path }
    var url: URL { TestPaths.sharedFeed(path) }
    var golden: URL {
        TestPaths.fixture("golden/datex2/" + (path.split(separator: "/").last ?? "").replacingOccurrences(of: ".xml", with: ".tsv"))
    }

    static let all = [
        DATEX2Sample(path: "datex2_fi_digitraffic/situation_v2_2_accident_20170810.xml", publishedAt: "2017-08-10T12:56:56Z", incompleteBecause: []),
        DATEX2Sample(path: "datex2_fi_digitraffic/situation_v3_5_GUID50456943.xml", publishedAt: "2025-11-27T06:24:59Z", incompleteBecause: []),
        DATEX2Sample(path: "datex2_nl_ndw/brugopeningen_v2_soap_snapshot_20220509.xml", publishedAt: "2022-05-09T03:09:39Z", incompleteBecause: []),
        DATEX2Sample(path: "datex2_nl_ndw/brugopeningen_v2_soap_push_lifecycle_end_20220512.xml", publishedAt: "2022-05-12T06:52:36Z", incompleteBecause: [
            "the publication is a push update (updateMethod allElementUpdate): it lists only the situations that changed, so it clears nothing",
        ]),
        DATEX2Sample(path: "datex2_nl_ndw/brugopeningen_v3_messagecontainer_20260402_first20.xml", publishedAt: "2026-04-02T12:03:00Z", incompleteBecause: []),
        DATEX2Sample(path: "datex2_nl_ndw/brugopeningen_v3_statefulpush_putDataInput_20260405.xml", publishedAt: "2026-04-05T14:01:29Z", incompleteBecause: [
            "the message is a push update (codedExchangeProtocol statefulPush): it lists only the situations that changed, so it clears nothing",
        ]),
    ]

    func bytes() throws -> [UInt8] { [UInt8](try Data(contentsOf: url)) }
}

@Suite("DATEX II")
struct DATEX2Tests {
    static func fixture(_ name: String) -> URL { TestPaths.fixture("datex2/\(name)") }
    static func t(_ text: String) -> UTCInstant? { UTCInstant(rfc3339: text) }

    // MARK: The real samples

    /// Expected values are in Tests/Fixtures/golden/datex2/*.tsv, computed from the XML by
    /// make_golden.py (Python ElementTree), not by this code.
    @Test("every real sample maps to the golden incidents: ids, categories, UTC times, geometry, text", arguments: DATEX2Sample.all)
    func golden(sample: DATEX2Sample) throws {
        let reading = try DATEX2Reading.read(sample.url)
        #expect(reading.rejected.isEmpty)
        #expect(reading.verdict == ResponseVerdict(incompleteBecause: sample.incompleteBecause, publishedAt: Self.t(sample.publishedAt)))
        let lines = try String(contentsOf: sample.golden, encoding: .utf8).split(separator: "\n").dropFirst()
        try #require(reading.incidents.count == lines.count)
        for (incident, line) in zip(reading.incidents, lines) {
            let c = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            try #require(c.count == 14, "\(line)")
            func text(_ i: Int) -> String? { c[i].isEmpty ? nil : c[i] }
            #expect(incident.source == "datex")
            #expect(incident.externalID == c[0])
            #expect(incident.category.rawValue == c[1], "\(c[0])")
            #expect(incident.providerCategory == text(2))
            #expect(incident.startedAt?.rfc3339 == text(3), "\(c[0])")
            #expect(incident.confirmedAt?.rfc3339 == text(4), "\(c[0])")
            #expect(incident.expectedEndAt?.rfc3339 == text(5), "\(c[0])")
            #expect(incident.endedAt?.rfc3339 == text(6), "\(c[0])")
            #expect((incident.geometry?.typeName ?? incident.coordinate.map { _ in "Point" }) == text(7), "\(c[0])")
            #expect(incident.geometry?.positions.first?.longitude ?? incident.coordinate?.longitude == text(8).flatMap(Double.init))
            #expect(incident.geometry?.positions.first?.latitude ?? incident.coordinate?.latitude == text(9).flatMap(Double.init))
            #expect(incident.road == text(10))
            #expect(incident.location == text(11), "\(c[0])")
            #expect(incident.direction == text(12))
            #expect(incident.description == text(13)?.replacingOccurrences(of: "\\n", with: "\n"))
        }
    }

    @Test("Fintraffic 2.2.3: an accident with a multi-line Finnish comment and an ALERT-C-only location")
    func fintrafficV2() throws {
        let reading = try DATEX2Reading.read(DATEX2Sample.all[0].url)
        #expect(reading.incidents.map(\.externalID) == ["GUID50013339/GUID5001357701", "GUID50013339/GUID5001357702", "GUID50013339/GUID5001357703"])
        #expect(reading.incidents.map(\.category) == [.accident, .congestion, .closure])
        let accident = try #require(reading.incidents.first)
        #expect(accident.providerCategory == "Accident")
        #expect(accident.startedAt == Self.t("2017-08-10T12:49:10Z"))  // 15:49:10.000+03:00
        #expect(accident.confirmedAt == Self.t("2017-08-10T12:56:56Z"))
        #expect(accident.expectedEndAt == nil && accident.endedAt == nil)
        #expect(accident.coordinate == nil && accident.geometry == nil, "ALERT-C alone gives no coordinate")
        #expect(accident.location == "ALERT-C 6/17 v1.11.33: 992 → 993")
        #expect(accident.direction == "positive")
        #expect(accident.description?.hasPrefix("Tie 3, eli Tampereen Läntinen Kehätie, Pirkkala. Liikennetiedote onnettomuudesta.\n\nTie 3, eli") == true)
        #expect(accident.description?.contains("\nOnnettomuus.\nLiikenne on jonoutunut.\n") == true, "lines trimmed of the XML's indentation")
    }

    @Test("NDW 2.0 lifecycle end: the record is over, its end time is endedAt, and the push clears nothing")
    func ndwLifecycleEnd() throws {
        let reading = try DATEX2Reading.read(DATEX2Sample.all[3].url)
        let incident = try #require(reading.incidents.first)
        #expect(incident == {
            var expected = Incident(source: "datex", externalID: "NDW04_NLKLM000600354200539_53304491/NDW04_NLKLM000600354200539_53304491_01",
                                    category: .closure, providerCategory: "GeneralNetworkManagement",
                                    coordinate: Coordinate(latitude: 53.2371586238383, longitude: 6.21257808460346),
                                    startedAt: Self.t("2022-05-12T06:48:05Z"), confirmedAt: Self.t("2022-05-12T06:52:36Z"),
                                    endedAt: Self.t("2022-05-12T06:52:36Z"))
            expected.geometry = nil
            return expected
        }())
        #expect(!reading.verdict.isComplete)
    }

    // MARK: Chunks, split points, prefixes

    @Test("each sample read in chunks of 1 to 64 bytes and split at every point gives the same records and verdict",
          arguments: DATEX2Sample.all)
    func chunked(sample: DATEX2Sample) throws {
        let bytes = try sample.bytes()
        let reader = DATEX2Reading.Reader()
        let whole = try reader.read(bytes, pieces: [0..<bytes.count])
        #expect(whole.outputs.count >= 1)
        #expect(whole.incidents == (try DATEX2Reading.read(sample.url)).incidents)
        for size in 1...64 {
            let pieces = stride(from: 0, to: bytes.count, by: size).map { $0..<min($0 + size, bytes.count) }
            let chunked = try reader.read(bytes, pieces: pieces)
            #expect(chunked == whole, "chunk size \(size)")
            if chunked != whole { break }
        }
        // Every split point up to 8,000 bytes (the four small samples); past that, 500 evenly
        // spaced points (the 48 and 55 KB NDW files), as Tests/IncidentXMLTests' ChunkingTests do.
        for split in stride(from: 0, through: bytes.count, by: bytes.count <= 8000 ? 1 : bytes.count / 500) {
            let result = try reader.read(bytes, pieces: [0..<split, split..<bytes.count])
            #expect(result == whole, "split at \(split)")
            if result != whole { break }
        }
    }

    /// Prefixes renamed everywhere (declarations, tags, QName values of xsi:type, the xsi
    /// prefix itself); 2.x's default namespace turned into a prefix.
    static func renamePrefixes(_ text: String) throws -> String {
        var out = text
        if text.contains("xmlns:sit=") {
            for (old, new) in [("sit", "s1"), ("com", "c2"), ("loc", "l3"), ("d2", "p4"), ("mc", "m5"), ("ex", "e6")] {
                out = out.replacingOccurrences(of: "<\(old):", with: "<\(new):").replacingOccurrences(of: "</\(old):", with: "</\(new):")
                    .replacingOccurrences(of: "xmlns:\(old)=", with: "xmlns:\(new)=").replacingOccurrences(of: "\"\(old):", with: "\"\(new):")
            }
        } else {
            let tags = try NSRegularExpression(pattern: "<(/?)([A-Za-z][A-Za-z0-9]*)([\\s/>])")
            out = tags.stringByReplacingMatches(in: out, range: NSRange(out.startIndex..., in: out), withTemplate: "<$1dx:$2$3")
            out = out.replacingOccurrences(of: "xmlns=\"http://datex2.eu/schema/2/2_0\"", with: "xmlns:dx=\"http://datex2.eu/schema/2/2_0\"")
                .replacingOccurrences(of: "xsi:type=\"", with: "xsi:type=\"dx:")
        }
        return out.replacingOccurrences(of: "xmlns:xsi=", with: "xmlns:i7=").replacingOccurrences(of: "xsi:", with: "i7:")
    }

    @Test("namespace prefixes renamed give identical incidents", arguments: DATEX2Sample.all)
    func renamedPrefixes(sample: DATEX2Sample) throws {
        let original = String(decoding: try sample.bytes(), as: UTF8.self)
        let renamed = try Self.renamePrefixes(original)
        #expect(renamed != original)
        #expect(!renamed.contains("xsi:") && !renamed.contains("<sit:") && !renamed.contains("<com:"))
        let bytes = Array(renamed.utf8)
        let reading = try DATEX2Reading.read(bytes, pieces: [0..<bytes.count])
        let expected = try DATEX2Reading.read(sample.url)
        #expect(reading == expected)
        #expect(reading.outputs.count == expected.incidents.count)
    }

    // MARK: Own fixtures

    @Test("records that cannot be read faithfully are set aside with their reason; the others are mapped")
    func recordsWithProblems() throws {
        let reading = try DATEX2Reading.read(Self.fixture("v3_records_with_problems.xml"))
        #expect(reading.verdict == ResponseVerdict(publishedAt: Self.t("2026-04-02T12:00:00Z")), "a record without an id is counted by the store, not the reader")
        #expect(reading.incidents.map(\.externalID) == ["S1/S1_01", "S3/S3_01"])
        #expect(reading.incidents[0] == Incident(
            source: "datex", externalID: "S1/S1_01", category: .accident, providerCategory: "Accident",
            coordinate: Coordinate(latitude: 52.1, longitude: 4.9),
            startedAt: Self.t("2026-04-02T07:55:00Z"), confirmedAt: Self.t("2026-04-02T10:00:00Z")))
        #expect(reading.incidents[1].category == .breakdown, "vehicleObstructionType brokenDownVehicle")
        #expect(reading.incidents[1].providerCategory == "VehicleObstruction")
        #expect(reading.rejected.map(\.externalID) == ["S2/S2_01", "S2/S2_02", nil, "S2/S2_04"])
        #expect(reading.rejected.map(\.reason) == [
            "situationRecord/probabilityOfOccurrence occurs 2 times",
            "has overallStartTime '2026-04-02 25:00', not an xs:dateTime",
            "the situationRecord has no id",
            "has a posList of 3 numbers, not pairs",
        ])
        #expect(reading.rejected.map(\.position) == ["situationRecord at line 24", "situationRecord at line 33", "situationRecord at line 41",
                                                     "situationRecord at line 49"])
        #expect(reading.rejected[1].excerpt == "situation=S2; id=S2_02; version=1; xsi:type={http://datex2.eu/schema/3/situation}MaintenanceWorks; "
                    + "situationRecordCreationTime=2026-04-02T10:00:00Z; situationRecordVersionTime=2026-04-02T10:00:00Z; overallStartTime=2026-04-02 25:00")
        // Exactly the order of the document: nothing is lost or moved.
        #expect(reading.outputs.count == 6)
    }

    @Test("3.x lines, TPEG ends, location groups, several languages, times without an offset in the source's zone")
    func linearAndMultilingual() throws {
        var options = ProviderOptionValues()
        options[DATEX2Provider.timeZone] = "Europe/Helsinki"
        options[DATEX2Provider.language] = "fi"
        let reading = try DATEX2Reading.read(Self.fixture("v3_linear_multilingual.xml"), options: options)
        #expect(reading.rejected.isEmpty)
        #expect(reading.verdict == ResponseVerdict(publishedAt: Self.t("2026-01-15T08:00:00Z")))
        try #require(reading.incidents.count == 3)
        let works = reading.incidents[0]
        #expect(works.externalID == "W1/W1_01")
        #expect(works.category == .roadwork)
        #expect(works.geometry == .lineString([Coordinate(latitude: 61.4981, longitude: 23.6523)!, Coordinate(latitude: 61.4990, longitude: 23.6610)!,
                                               Coordinate(latitude: 61.5003, longitude: 23.6702)!]))
        #expect(works.coordinate == works.geometry?.representativePoint)
        #expect(works.road == "Tampereen Läntinen Kehätie")
        #expect(works.direction == "northBound")
        #expect(works.description == "fi: Tietyö.\nYksi kaista suljettu.\n\nsv: Vägarbete.\nEtt körfält stängt.\n\nen: Road works. One lane closed.\n\nKiertotie merkitty.")
        #expect(works.confirmedAt == Self.t("2026-01-15T07:30:00Z"))   // 09:30 EET (+02:00)
        #expect(works.startedAt == Self.t("2026-07-01T04:00:00Z"))     // 07:00 EEST (+03:00)
        #expect(works.expectedEndAt == Self.t("2026-07-30T21:00:00Z")) // the date alone: its midnight in Helsinki
        #expect(works.endedAt == nil)

        let lanes = reading.incidents[1]
        #expect(lanes.category == .closure)
        #expect(lanes.geometry == .multiPoint([Coordinate(latitude: 61.47, longitude: 23.80)!, Coordinate(latitude: 61.45, longitude: 23.85)!]))
        #expect(lanes.road == "Hervannan valtaväylä")
        #expect(lanes.direction == "southBound")
        #expect(lanes.endedAt == Self.t("2026-01-15T07:30:00Z"), "definedByValidityTimeSpec and the end is before the publication")
        #expect(lanes.expectedEndAt == nil)
        #expect(lanes.confirmedAt == Self.t("2026-01-15T07:30:00Z"), "an explicit offset wins over the source's zone")

        let group = reading.incidents[2]
        #expect(group.category == .event, "GeneralNetworkManagement 'other' → the cause, publicEvent")
        #expect(group.geometry == .multiPoint([Coordinate(latitude: 61.49, longitude: 23.76)!, Coordinate(latitude: 61.51, longitude: 23.77)!]))
        #expect(group.location == "ALERT-C 6/17 v1.11.44: 1203")
        #expect(group.direction == "negative")
        #expect(group.expectedEndAt == nil && group.endedAt == nil)

        // Without a language option, the languages come in the document's order.
        let plain = try DATEX2Reading.read(Self.fixture("v3_linear_multilingual.xml"))
        #expect(plain.incidents[0].description == "sv: Vägarbete.\nEtt körfält stängt.\n\nfi: Tietyö.\nYksi kaista suljettu.\n\nen: Road works. One lane closed.\n\nKiertotie merkitty.")
        #expect(plain.incidents[0].startedAt == Self.t("2026-07-01T07:00:00Z"), "UTC by default")
    }

    @Test("2.x: TPEG ends and a road name, a cancelled record ended, an extension kind, a suspended record")
    func v2Fixture() throws {
        let reading = try DATEX2Reading.read(Self.fixture("v2_linear_tpeg_cancelled.xml"))
        #expect(reading.verdict == ResponseVerdict(publishedAt: Self.t("2024-03-01T12:00:00Z")), "updateMethod snapshot")
        #expect(reading.rejected.isEmpty)
        try #require(reading.incidents.count == 2)
        #expect(reading.incidents[0] == {
            var expected = Incident(source: "datex", externalID: "T1/T1_a", category: .roadwork, providerCategory: "ConstructionWorks",
                                    description: "Bridge strengthening.", road: "A4", direction: "eastBound",
                                    startedAt: Self.t("2024-02-05T06:00:00Z"), confirmedAt: Self.t("2024-02-01T08:00:00Z"),
                                    endedAt: Self.t("2024-02-20T18:00:00Z"))
            expected.setGeometry(.multiPoint([Coordinate(latitude: 51.48, longitude: -0.20)!, Coordinate(latitude: 51.50, longitude: -0.10)!]))
            return expected
        }())
        let extensionKind = reading.incidents[1]
        #expect(extensionKind.providerCategory == "{urn:example:datex-extension}LowBridgeWarning")
        #expect(extensionKind.category == .obstruction, "an unknown kind takes its cause's category")
        #expect(extensionKind.expectedEndAt == Self.t("2024-02-02T08:00:00Z"), "suspended: not over")
        #expect(extensionKind.endedAt == nil)
        #expect(extensionKind.coordinate == Coordinate(latitude: 51.49, longitude: -0.15))
        #expect(extensionKind.geometry == nil)
    }

    @Test("a SituationPublication with no situation is a complete, empty answer")
    func emptySnapshot() throws {
        let reading = try DATEX2Reading.read(Self.fixture("v2_empty_snapshot.xml"))
        #expect(reading.outputs.isEmpty)
        #expect(reading.verdict == ResponseVerdict(publishedAt: Self.t("2024-03-01T12:00:00Z")))
    }

    @Test("two payloads in one container: every record is read, but the answer is not trusted to be complete")
    func twoPayloads() throws {
        let reading = try DATEX2Reading.read(Self.fixture("v3_container_two_payloads.xml"))
        #expect(reading.incidents.map(\.externalID) == ["A/A_01", "B/B_01"])
        #expect(reading.verdict.incompleteBecause == [
            "the publication's envelope is ambiguous (payload occurs more than once), so it may not list every active situation",
            "the publication's envelope is ambiguous (publicationTime occurs more than once), so it may not list every active situation",
        ])
    }

    @Test("what is not a SituationPublication is refused with what it is and what to do", arguments: [
        ("not_datex_rss.xml", FeedError.Kind.unexpectedResponse,
         "datex2: expected a DATEX II SituationPublication (d2LogicalModel, d2:payload or mc:messageContainer, plain or in SOAP) but the document (root element <rss>) has a situationRecord outside a payload publication: the root element is in no namespace, and DATEX II's elements all are; check the base URL"),
        ("v2_measured_data.xml", .unexpectedResponse,
         "datex2: the DATEX II payload is a MeasuredDataPublication, not a SituationPublication; check the base URL (it must serve situations)"),
        ("soap_fault.xml", .apiError,
         "datex2: the server answered with a SOAP Fault (soapenv:Client): Subscription unknown or expired; nothing was stored"),
        ("v2_deny_reason.xml", .apiError,
         "datex2: the DATEX II exchange refused the request (denyReason unknownReason) and sent no publication; nothing was stored"),
    ])
    func refused(name: String, kind: FeedError.Kind, message: String) throws {
        let (error, delivered) = feedError(DATEX2Provider.self, Self.fixture(name))
        #expect(error?.kind == kind)
        #expect(error?.description == message)
        #expect(delivered == 0)
    }

    @Test("a non-DATEX root without records, HTML and JSON bodies, and truncated XML are refused too")
    func refusedBodies() throws {
        let rss = try temporaryFile("<?xml version=\"1.0\"?><rss version=\"2.0\"><channel/></rss>")
        #expect(feedError(DATEX2Provider.self, rss).error?.message
                    == "expected a DATEX II SituationPublication (d2LogicalModel, d2:payload or mc:messageContainer, plain or in SOAP) but the document (root element <rss>) holds no payload publication: the root element is in no namespace, and DATEX II's elements all are; check the base URL")
        let html = try temporaryFile("<!DOCTYPE html><html><body>Service Unavailable</body></html>")
        #expect(feedError(DATEX2Provider.self, html).error?.kind == .unexpectedResponse)
        let json = try temporaryFile("{\"type\":\"FeatureCollection\"}")
        #expect(feedError(DATEX2Provider.self, json).error?.kind == .unexpectedResponse)
        let text = String(decoding: try DATEX2Sample.all[1].bytes(), as: UTF8.self)
        let truncated = try temporaryFile(String(text.prefix(2500)))
        let (error, delivered) = feedError(DATEX2Provider.self, truncated)
        #expect(error?.kind == .malformedBody)
        #expect(error?.message.hasPrefix("truncated XML response (cut off before its end) at line ") == true, "\(error?.message ?? "")")
        #expect(error?.message.contains("the document ended inside <") == true, "\(error?.message ?? "")")
        #expect(delivered == 0)
    }

    @Test("push updates never clear, snapshots may: updateMethod and codedExchangeProtocol", arguments: [
        ("<updateMethod>snapshot</updateMethod>", nil),
        ("<updateMethod>singleElementUpdate</updateMethod>",
         "the publication is a push update (updateMethod singleElementUpdate): it lists only the situations that changed, so it clears nothing"),
    ] as [(String, String?)])
    func v2UpdateMethods(replacement: String, reason: String?) throws {
        let text = String(decoding: try DATEX2Sample.all[2].bytes(), as: UTF8.self)
            .replacingOccurrences(of: "<updateMethod>snapshot</updateMethod>", with: replacement)
        let reading = try DATEX2Reading.read(try temporaryFile(text))
        #expect(reading.incidents.count == 36)
        #expect(reading.verdict.incompleteBecause == (reason.map { [$0] } ?? []))
    }

    @Test("3.x exchange protocols: snapshots complete, pushes and an unnamed protocol not", arguments: [
        ("snapshotPull", nil), ("snapshotPush", nil),
        ("simplePush", "the message is a push update (codedExchangeProtocol simplePush): it lists only the situations that changed, so it clears nothing"),
        ("", "the message container names no exchange protocol (ex:codedExchangeProtocol), so it cannot be told from a push update; it clears nothing"),
    ] as [(String, String?)])
    func v3Protocols(protocolName: String, reason: String?) throws {
        let text = String(decoding: try DATEX2Sample.all[4].bytes(), as: UTF8.self)
            .replacingOccurrences(of: "<ex:codedExchangeProtocol>snapshotPull</ex:codedExchangeProtocol>",
                                  with: protocolName.isEmpty ? "" : "<ex:codedExchangeProtocol>\(protocolName)</ex:codedExchangeProtocol>")
        let reading = try DATEX2Reading.read(try temporaryFile(text))
        #expect(reading.incidents.count == 20)
        #expect(reading.verdict.incompleteBecause == (reason.map { [$0] } ?? []))
    }

    // MARK: Options, router, categories

    @Test("options: language codes, IANA zones and key parameter names are checked")
    func options() throws {
        #expect(throws: ProviderOptionProblem.self) { _ = try DATEX2Provider.language.validated(.text("finnish!")) }
        #expect(try DATEX2Provider.language.validated(.text("nl-BE")) == .text("nl-BE"))
        #expect(try DATEX2Provider.language.validated(.text("")) == .text(""))
        #expect(try DATEX2Provider.timeZone.validated(.text("Europe/Helsinki")) == .text("Europe/Helsinki"))
        #expect(throws: ProviderOptionProblem.self) { _ = try DATEX2Provider.timeZone.validated(.text("Mars/Olympus")) }
        #expect(throws: ProviderOptionProblem.self) { _ = try DATEX2Provider.keyParameter.validated(.text("api key&")) }
    }

    @Test("the router: Digitraffic by default with no key; a key only where keyParameter says")
    func router() throws {
        let plain = try DATEX2Provider.router(for: SourceDefinition(name: "fi", provider: "datex2")).asURLRequest()
        #expect(plain.url?.absoluteString == "https://tie.digitraffic.fi/api/traffic-message/v1/messages.datex2")
        #expect(plain.value(forHTTPHeaderField: "Digitraffic-User") == "TrafficIncidents")

        var keyed = SourceDefinition(name: "x", provider: "datex2", key: APIKey("k+y/1="),
                                     baseURL: URL(string: "https://datex.example.org/situations?format=xml"))
        keyed.options[DATEX2Provider.keyParameter] = "apikey"
        let request = try DATEX2Provider.router(for: keyed).asURLRequest()
        #expect(request.url?.absoluteString == "https://datex.example.org/situations?format=xml&apikey=k%2By%2F1%3D")
        #expect(request.value(forHTTPHeaderField: "Digitraffic-User") == nil)
        #expect(Redaction.redact(request.url?.absoluteString ?? "") == "https://datex.example.org/situations?format=xml&apikey=REDACTED")

        keyed.key = nil
        #expect((try? DATEX2Provider.router(for: keyed)) == nil, "keyParameter without a key is a missing key")
        var unused = SourceDefinition(name: "y", provider: "datex2", key: APIKey("secret"))
        unused.options[DATEX2Provider.keyParameter] = ""
        do {
            _ = try DATEX2Provider.router(for: unused)
            Issue.record("a key with nowhere to go must be refused")
        } catch let error as FeedError {
            #expect(error.kind == .configuration)
        }
    }

    @Test("category table: detail, then kind, then cause", arguments: [
        ("{http://datex2.eu/schema/3/situation}VehicleObstruction", "brokenDownVehicle", nil, IncidentCategory.breakdown),
        ("{http://datex2.eu/schema/3/situation}VehicleObstruction", "abandonedVehicle", nil, .obstruction),
        ("{http://datex2.eu/schema/2/2_0}GeneralNetworkManagement", "bridgeSwingInOperation", nil, .closure),
        ("{http://datex2.eu/schema/2/2_0}GeneralNetworkManagement", "rampMeteringInOperation", "roadMaintenance", .roadwork),
        ("{http://datex2.eu/schema/2/2_0}AbnormalTraffic", nil, "accident", .congestion),
        ("{http://datex2.eu/schema/3/situation}PoorEnvironmentConditions", nil, nil, .weather),
        ("{http://datex2.eu/schema/3/situation}PublicEvent", nil, nil, .event),
        ("Accident", nil, nil, .accident),
        ("{urn:x}Accident", nil, nil, .other),
        (nil, nil, "poorWeather", .weather),
    ] as [(String?, String?, String?, IncidentCategory)])
    func categories(type: String?, detail: String?, cause: String?, expected: IncidentCategory) {
        #expect(DATEX2Categories.category(recordType: type, detailType: detail, causeType: cause) == expected)
    }

    @Test("every concrete SituationRecord kind of DATEX II 2.2.3 and 3.1 is in the table")
    func everyKind() {
        // The concrete subtypes of SituationRecord in DATEXIISchema_2_2_3.xsd and DATEXII_3_Situation.xsd.
        let kinds = ["AbnormalTraffic", "Accident", "AnimalPresenceObstruction", "AuthorityOperation", "CarParks", "Conditions",
                     "ConstructionWorks", "DisturbanceActivity", "EnvironmentalObstruction", "EquipmentOrSystemFault",
                     "GeneralInstructionOrMessageToRoadUsers", "GeneralNetworkManagement", "GeneralObstruction", "GenericSituationRecord",
                     "InfrastructureDamageObstruction", "MaintenanceWorks", "NonWeatherRelatedRoadConditions", "OperatorAction",
                     "PoorEnvironmentConditions", "PublicEvent", "ReroutingManagement", "RoadOperatorServiceDisruption",
                     "RoadOrCarriagewayOrLaneManagement", "RoadsideAssistance", "RoadsideServiceDisruption", "ServiceDisruption",
                     "SignSetting", "SpeedManagement", "TransitInformation", "VehicleObstruction", "WeatherRelatedRoadConditions",
                     "WinterDrivingManagement"]
        #expect(Set(DATEX2Categories.recordTypes.keys) == Set(kinds))
    }

    @Test("zone-less times follow the zone's DST; explicit offsets are kept", arguments: [
        ("2026-01-15T09:30:00", "Europe/Helsinki", "2026-01-15T07:30:00Z"),
        ("2026-07-15T09:30:00", "Europe/Helsinki", "2026-07-15T06:30:00Z"),
        ("2026-03-29T02:30:00", "Europe/Amsterdam", "2026-03-29T01:30:00Z"),  // skipped by the change to DST: +01:00
        ("2026-10-25T02:30:00", "Europe/Amsterdam", "2026-10-25T01:30:00Z"),  // repeated by the change back: +01:00
        ("2026-07-15T09:30:00+02:00", "Europe/Helsinki", "2026-07-15T07:30:00Z"),
        ("2026-07-15T09:30:00Z", "America/Vancouver", "2026-07-15T09:30:00Z"),
        ("2026-07-15", "America/Vancouver", "2026-07-15T07:00:00Z"),
        ("2026-07-15T09:30", "UTC", "2026-07-15T09:30:00Z"),
        (" 2026-07-15T09:30:00-07:00", "UTC", "2026-07-15T16:30:00Z"),
    ])
    func zonedTimes(text: String, zone: String, utc: String) throws {
        let timeZone = try #require(ProviderTimeZone(identifier: zone))
        #expect(timeZone.instant(iso8601: text)?.rfc3339 == utc)
    }
}
