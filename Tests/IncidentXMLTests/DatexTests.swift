import Foundation
import IncidentXML
import Testing
import TestSupport

/// A DATEX II reading written the way a DATEX II provider would write it on top of the reader:
/// `situationRecord` records with their `situation`'s id and version, the record kind from
/// `xsi:type` resolved to a namespace, validity times by path, comments in every language,
/// the location kind and every point coordinate. Field indexes are the same for v2 and v3.
enum DatexSchema {
    static let d2 = "http://datex2.eu/schema/2/2_0"
    static let sit = "http://datex2.eu/schema/3/situation"
    static let com = "http://datex2.eu/schema/3/common"
    static let loc = "http://datex2.eu/schema/3/locationReferencing"
    static let d2Payload = "http://datex2.eu/schema/3/d2Payload"
    static let messageContainer = "http://datex2.eu/schema/3/messageContainer"

    /// Indexes into `fields`.
    enum Field: Int {
        case creationTime, versionTime, probability, startTime, endTime, comment, locationKind, latitude, longitude
    }
    /// Indexes into `envelopeFields`.
    enum Envelope: Int {
        case publicationTime, country, payloadKind, containerPayloadKind
    }

    static let lang = XMLAttribute(XMLName("lang"))
    static let recordAttributes = [XMLAttribute(XMLName("id")), XMLAttribute(XMLName("version")), .xsiType]

    static let v2: XMLRecordSchema = {
        func n(_ local: String) -> XMLName { XMLName(local, namespaceURI: d2) }
        return XMLRecordSchema(
            recordElements: [n("situationRecord")],
            fields: [
                XMLField(n("situationRecordCreationTime")),
                XMLField(n("situationRecordVersionTime")),
                XMLField(n("probabilityOfOccurrence")),
                XMLField([n("validityTimeSpecification"), n("overallStartTime")]),
                XMLField([n("validityTimeSpecification"), n("overallEndTime")]),
                XMLField([n("comment"), n("values"), n("value")], cardinality: .repeated, attributes: [lang]),
                XMLField(n("groupOfLocations"), attributes: [.xsiType], capturesText: false),
                XMLField([n("pointCoordinates"), n("latitude")], cardinality: .repeated),
                XMLField([n("pointCoordinates"), n("longitude")], cardinality: .repeated),
            ],
            envelopeFields: [
                XMLField(n("publicationTime")),
                XMLField([n("publicationCreator"), n("country")]),
                XMLField(n("payloadPublication"), attributes: [.xsiType], capturesText: false),
                XMLField(XMLName("payload", namespaceURI: messageContainer), attributes: [.xsiType], capturesText: false),
            ],
            recordAttributes: recordAttributes,
            contextAttributes: [XMLContextAttribute(element: n("situation"), attribute: XMLAttribute(XMLName("id"))),
                                XMLContextAttribute(element: n("situation"), attribute: XMLAttribute(XMLName("version")))])
    }()

    static let v3: XMLRecordSchema = {
        func s(_ local: String) -> XMLName { XMLName(local, namespaceURI: sit) }
        func c(_ local: String) -> XMLName { XMLName(local, namespaceURI: com) }
        func l(_ local: String) -> XMLName { XMLName(local, namespaceURI: loc) }
        return XMLRecordSchema(
            recordElements: [s("situationRecord")],
            fields: [
                XMLField(s("situationRecordCreationTime")),
                XMLField(s("situationRecordVersionTime")),
                XMLField(s("probabilityOfOccurrence")),
                XMLField([c("validityTimeSpecification"), c("overallStartTime")]),
                XMLField([c("validityTimeSpecification"), c("overallEndTime")]),
                XMLField([s("comment"), c("values"), c("value")], cardinality: .repeated, attributes: [lang]),
                XMLField(s("locationReference"), attributes: [.xsiType], capturesText: false),
                XMLField([l("pointCoordinates"), l("latitude")], cardinality: .repeated),
                XMLField([l("pointCoordinates"), l("longitude")], cardinality: .repeated),
            ],
            envelopeFields: [
                XMLField(c("publicationTime")),
                XMLField([c("publicationCreator"), c("country")]),
                XMLField(XMLName("payload", namespaceURI: d2Payload), attributes: [.xsiType], capturesText: false),
                XMLField(XMLName("payload", namespaceURI: messageContainer), attributes: [.xsiType], capturesText: false),
            ],
            recordAttributes: recordAttributes,
            contextAttributes: [XMLContextAttribute(element: s("situation"), attribute: XMLAttribute(XMLName("id"))),
                                XMLContextAttribute(element: s("situation"), attribute: XMLAttribute(XMLName("version")))])
    }()

    static func kind(_ local: String, _ namespace: String) -> String { XMLName(local, namespaceURI: namespace).description }
}

/// The recorded DATEX II samples in shared/feeds.
struct DatexSample: Sendable, CustomTestStringConvertible {
    let path: String
    let schema: XMLRecordSchema
    var testDescription: String { path }

    static let fiV2 = DatexSample(path: "datex2_fi_digitraffic/situation_v2_2_accident_20170810.xml", schema: DatexSchema.v2)
    static let fiV3 = DatexSample(path: "datex2_fi_digitraffic/situation_v3_5_GUID50456943.xml", schema: DatexSchema.v3)
    static let ndwV2Snapshot = DatexSample(path: "datex2_nl_ndw/brugopeningen_v2_soap_snapshot_20220509.xml", schema: DatexSchema.v2)
    static let ndwV2LifecycleEnd = DatexSample(path: "datex2_nl_ndw/brugopeningen_v2_soap_push_lifecycle_end_20220512.xml", schema: DatexSchema.v2)
    static let ndwV3Container = DatexSample(path: "datex2_nl_ndw/brugopeningen_v3_messagecontainer_20260402_first20.xml", schema: DatexSchema.v3)
    static let ndwV3Push = DatexSample(path: "datex2_nl_ndw/brugopeningen_v3_statefulpush_putDataInput_20260405.xml", schema: DatexSchema.v3)
    static let all = [fiV2, fiV3, ndwV2Snapshot, ndwV2LifecycleEnd, ndwV3Container, ndwV3Push]

    func bytes() throws -> [UInt8] { try loadBytes(TestPaths.sharedFeed(path)) }
    func text() throws -> String { String(decoding: try bytes(), as: UTF8.self) }
}

/// The DATEX II samples read with `DatexSchema`; expected values were read from the same files
/// with Python's xml.etree.ElementTree.
@Suite struct DatexTests {
    typealias F = DatexSchema.Field
    typealias E = DatexSchema.Envelope

    static func texts(_ record: XMLRecord, _ field: F) -> [String?] {
        record.occurrences(of: field.rawValue).map(\.text)
    }

    @Test func fintrafficV2Accident() throws {
        let result = try read(DatexSample.fiV2.bytes(), schema: DatexSchema.v2)
        let d2 = DatexSchema.d2
        #expect(result.records.count == 3)
        #expect(result.finalEnvelope.rootElement == XMLName("d2LogicalModel", namespaceURI: d2))
        #expect(result.finalEnvelope.values == ["2017-08-10T15:56:56.951+03:00", "fi", nil, nil])
        #expect(result.finalEnvelope.attributes[E.payloadKind.rawValue] == [DatexSchema.kind("SituationPublication", d2)])
        #expect(result.finalEnvelope.problems.isEmpty)

        let accident = result.records[0]
        #expect(accident.attributes == ["GUID5001357701", "1", DatexSchema.kind("Accident", d2)])
        #expect(accident.context == ["GUID50013339", "1"])
        #expect(accident.values == ["2017-08-10T15:56:56.951+03:00", "2017-08-10T15:56:56.951+03:00", "certain",
                                    "2017-08-10T15:49:10.000+03:00", nil, nil, nil, nil, nil])
        let comments = accident.occurrences(of: F.comment.rawValue)
        #expect(comments.count == 1)
        #expect(comments.first?.attributes == ["fi"])
        let comment = try #require(comments.first?.text)
        #expect(comment.hasPrefix("Tie 3, eli Tampereen Läntinen Kehätie, Pirkkala. Liikennetiedote onnettomuudesta.\n\n"))
        #expect(comment.hasSuffix("Sähköposti: tampere.liikennekeskus@liikennevirasto.fi"))
        #expect(accident.occurrences(of: F.locationKind.rawValue) == [XMLOccurrence(field: F.locationKind.rawValue, text: nil, attributes: [DatexSchema.kind("Linear", d2)])])
        #expect(Self.texts(accident, .latitude).isEmpty)
        #expect(accident.problems.isEmpty && accident.repairs == 0)

        #expect(result.records.map { $0.attributes[2] } == [DatexSchema.kind("Accident", d2), DatexSchema.kind("AbnormalTraffic", d2),
                                                           DatexSchema.kind("RoadOrCarriagewayOrLaneManagement", d2)])
        #expect(result.records.map(\.attributes[0]) == ["GUID5001357701", "GUID5001357702", "GUID5001357703"])
        #expect(result.records[1].occurrences == [XMLOccurrence(field: F.locationKind.rawValue, text: nil, attributes: [DatexSchema.kind("Point", d2)])])
        #expect(result.records.allSatisfy { $0.context == ["GUID50013339", "1"] && $0.problems.isEmpty })
    }

    @Test func fintrafficV3TransitInformation() throws {
        let result = try read(DatexSample.fiV3.bytes(), schema: DatexSchema.v3)
        #expect(result.records.count == 1)
        #expect(result.finalEnvelope.rootElement == XMLName("payload", namespaceURI: DatexSchema.d2Payload))
        #expect(result.finalEnvelope.values == ["2025-11-27T06:24:59.805Z", "FI", nil, nil])
        #expect(result.finalEnvelope.attributes == [[], [], [DatexSchema.kind("SituationPublication", DatexSchema.sit)], [nil]])
        let r = result.records[0]
        #expect(r.attributes == ["GUID5046133001", "1", DatexSchema.kind("TransitInformation", DatexSchema.sit)])
        #expect(r.context == ["GUID50456943", nil], "v3 situations carry no version")
        #expect(r.values == ["2025-11-27T06:24:59.094Z", "2025-11-27T06:24:59.065Z", "certain",
                             "2025-11-27T07:20:00.000Z", "2025-11-27T07:50:00.000Z", nil, nil, nil, nil])
        let comments = r.occurrences(of: F.comment.rawValue)
        #expect(comments.map(\.attributes) == [["fi"]])
        #expect(comments.first?.text?.hasPrefix("Tie 15358, eli Pihlajaniementie, Savonlinna. Liikennetiedote.s\n\n") == true)
        #expect(comments.first?.text?.hasSuffix("Sähköposti: tampere.liikennekeskus@fintraffic.fi") == true)
        #expect(r.occurrences(of: F.locationKind.rawValue).map(\.attributes) == [[DatexSchema.kind("PointLocation", DatexSchema.loc)]])
        #expect(r.problems.isEmpty)
        #expect(r.line == 16)
    }

    @Test func ndwV2SnapshotInSOAP() throws {
        let result = try read(DatexSample.ndwV2Snapshot.bytes(), schema: DatexSchema.v2)
        let d2 = DatexSchema.d2
        #expect(result.records.count == 36)
        #expect(result.finalEnvelope.rootElement == XMLName("Envelope", namespaceURI: "http://schemas.xmlsoap.org/soap/envelope/"))
        #expect(result.finalEnvelope.values == ["2022-05-09T03:09:39.689Z", "nl", nil, nil])
        #expect(result.finalEnvelope.attributes[E.payloadKind.rawValue] == [DatexSchema.kind("SituationPublication", d2)])

        let first = result.records[0]
        #expect(first.context == ["NDW04_NLGRU000605560900877_53022369", "1"])
        #expect(first.attributes == ["NDW04_NLGRU000605560900877_53022369_01", "1", DatexSchema.kind("GeneralNetworkManagement", d2)])
        #expect(first[F.startTime.rawValue] == "2022-05-09T08:17:00.000Z")
        #expect(first[F.endTime.rawValue] == "2022-05-09T08:20:00.000Z")
        #expect(first[F.probability.rawValue] == "riskOf")
        // pointCoordinates/latitude only: locationForDisplay/latitude is another path.
        #expect(Self.texts(first, .latitude) == ["53.0788516023389"])
        #expect(Self.texts(first, .longitude) == ["5.82801103591919"])
        #expect(first.occurrences(of: F.locationKind.rawValue).map(\.attributes) == [[DatexSchema.kind("Point", d2)]])
        #expect(first.occurrences(of: F.comment.rawValue).isEmpty, "source/sourceName/values/value is not a comment")

        let last = result.records[35]
        #expect(last.context == ["NDW04_NLCPI0211D0518200003_53113614", "1"])
        #expect(last[F.startTime.rawValue] == "2022-05-06T11:21:29.000Z")
        #expect(last[F.endTime.rawValue] == nil)
        #expect(Self.texts(last, .latitude) == ["51.9170730683182"])
        #expect(Self.texts(last, .longitude) == ["4.57852005958557"])

        #expect(result.records.filter { $0[F.endTime.rawValue] != nil }.count == 32)
        #expect(result.records.filter { $0[F.probability.rawValue] == "riskOf" }.count == 32)
        #expect(result.records.filter { $0[F.probability.rawValue] == "certain" }.count == 4)
        #expect(result.records.allSatisfy { ($0.context[0] ?? "") + "_01" == $0.attributes[0] })
        #expect(result.records.allSatisfy { $0.problems.isEmpty && $0.repairs == 0 })
        #expect(Set(result.records.map { $0.attributes[2] }) == [DatexSchema.kind("GeneralNetworkManagement", d2)])
    }

    @Test func ndwV2LifecycleEnd() throws {
        let result = try read(DatexSample.ndwV2LifecycleEnd.bytes(), schema: DatexSchema.v2)
        #expect(result.records.count == 1)
        let r = result.records[0]
        #expect(r.context == ["NDW04_NLKLM000600354200539_53304491", "2"])
        #expect(r.attributes == ["NDW04_NLKLM000600354200539_53304491_01", "2",
                                 DatexSchema.kind("GeneralNetworkManagement", DatexSchema.d2)])
        #expect(r.values == ["2022-05-12T06:52:36.000Z", "2022-05-12T06:52:36.000Z", "certain",
                             "2022-05-12T06:48:05.000Z", "2022-05-12T06:52:36.000Z", nil, nil, nil, nil])
        #expect(Self.texts(r, .latitude) == ["53.2371586238383"])
        #expect(result.finalEnvelope.values == ["2022-05-12T06:52:36.937Z", "nl", nil, nil])
    }

    @Test func ndwV3MessageContainer() throws {
        let result = try read(DatexSample.ndwV3Container.bytes(), schema: DatexSchema.v3)
        let sit = DatexSchema.sit
        #expect(result.records.count == 20)
        #expect(result.finalEnvelope.rootElement == XMLName("messageContainer", namespaceURI: DatexSchema.messageContainer))
        // com:country occurs twice in the document; only the one under publicationCreator is read.
        #expect(result.finalEnvelope.values == ["2026-04-02T12:03:00.001346644Z", "nl", nil, nil])
        #expect(result.finalEnvelope.attributes[E.containerPayloadKind.rawValue] == [DatexSchema.kind("SituationPublication", sit)])
        #expect(result.finalEnvelope.problems.isEmpty)

        let first = result.records[0]
        #expect(first.context == ["BMS01_NLZAA002360561800012_117118075", nil])
        #expect(first.attributes == ["BMS01_NLZAA002360561800012_117118075_01", "1", DatexSchema.kind("GeneralNetworkManagement", sit)])
        #expect(first[F.creationTime.rawValue] == "2026-04-01T13:21:33.187350Z")
        #expect(first[F.startTime.rawValue] == "2026-04-03T06:09:00Z")
        #expect(first[F.endTime.rawValue] == "2026-04-03T06:15:00Z")
        #expect(Self.texts(first, .latitude) == ["52.42779"])
        #expect(Self.texts(first, .longitude) == ["4.834402"])
        #expect(first.occurrences(of: F.locationKind.rawValue).map(\.attributes) == [[DatexSchema.kind("PointLocation", DatexSchema.loc)]])

        let last = result.records[19]
        #expect(last.context == ["BMS01_NLHIL002020472700211_114563562", nil])
        #expect(last[F.startTime.rawValue] == "2026-04-02T15:18:00Z")
        #expect(last[F.endTime.rawValue] == "2026-04-02T15:24:00Z")
        #expect(Self.texts(last, .latitude) == ["52.28864"])
        #expect(Self.texts(last, .longitude) == ["4.594043"])
        #expect(result.records.allSatisfy { $0[F.probability.rawValue] == "riskOf" && $0[F.endTime.rawValue] != nil && $0.problems.isEmpty })
    }

    @Test func ndwV3StatefulPushInSOAP() throws {
        let result = try read(DatexSample.ndwV3Push.bytes(), schema: DatexSchema.v3)
        #expect(result.records.count == 1)
        #expect(result.finalEnvelope.rootElement == XMLName("Envelope", namespaceURI: "http://schemas.xmlsoap.org/soap/envelope/"))
        #expect(result.finalEnvelope.values == ["2026-04-05T14:01:29.369983269Z", "nl", nil, nil])
        let r = result.records[0]
        #expect(r.context == ["BMS01_NLSPD002020468900036_120601779", nil])
        #expect(r.attributes == ["BMS01_NLSPD002020468900036_120601779_01", "5", DatexSchema.kind("GeneralNetworkManagement", DatexSchema.sit)])
        #expect(r.values == ["2026-04-05T14:01:28.276012340Z", "2026-04-05T14:01:28.276012340Z", "riskOf",
                             "2026-04-05T14:02:00Z", "2026-04-05T14:08:00Z", nil, nil, nil, nil])
        #expect(Self.texts(r, .latitude) == ["52.413273"])
        #expect(Self.texts(r, .longitude) == ["4.681905"])
    }

    /// The same document with other prefixes (v3: sit/com/loc renamed, in element names and in
    /// xsi:type values alike; v2: the default namespace turned into a prefix) reads the same.
    @Test(arguments: DatexSample.all)
    func renamedPrefixesReadTheSame(_ sample: DatexSample) throws {
        let original = try read(sample.bytes(), schema: sample.schema)
        let renamed = try Self.renamePrefixes(sample.text())
        #expect(renamed != (try sample.text()))
        let result = try read(Array(renamed.utf8), schema: sample.schema)
        #expect(result == original)
    }

    /// v3: `sit:` → `s1:`, `com:` → `c2:`, `loc:` → `l3:` everywhere (declarations, tags,
    /// QName values). v2: every unprefixed element gets the prefix `dx:` bound to the DATEX II
    /// namespace, and unprefixed `xsi:type` values get it too.
    static func renamePrefixes(_ text: String) throws -> String {
        if text.contains("xmlns:sit=") {
            return text.replacingOccurrences(of: "sit:", with: "s1:").replacingOccurrences(of: "xmlns:sit=", with: "xmlns:s1=")
                .replacingOccurrences(of: "com:", with: "c2:").replacingOccurrences(of: "xmlns:com=", with: "xmlns:c2=")
                .replacingOccurrences(of: "loc:", with: "l3:").replacingOccurrences(of: "xmlns:loc=", with: "xmlns:l3=")
        }
        let tags = try NSRegularExpression(pattern: "<(/?)([A-Za-z][A-Za-z0-9]*)([\\s/>])")
        var out = tags.stringByReplacingMatches(in: text, range: NSRange(text.startIndex..., in: text), withTemplate: "<$1dx:$2$3")
        out = out.replacingOccurrences(of: "xmlns=\"http://datex2.eu/schema/2/2_0\"", with: "xmlns:dx=\"http://datex2.eu/schema/2/2_0\"")
        out = out.replacingOccurrences(of: "xsi:type=\"", with: "xsi:type=\"dx:")
        return out
    }

    /// `latitude` means different things at different places: only pointCoordinates/latitude
    /// is read, whatever locationForDisplay/latitude says.
    @Test func pathTellsSameLocalNamesApart() throws {
        let text = try DatexSample.ndwV2LifecycleEnd.text()
            .replacingOccurrences(of: "<locationForDisplay><latitude>53.2371586238383", with: "<locationForDisplay><latitude>1.5")
        let result = try readInEveryChunking(Array(text.utf8), schema: DatexSchema.v2)
        #expect(Self.texts(result.records[0], .latitude) == ["53.2371586238383"])
        // Not under validityTimeSpecification: not the start time.
        let moved = try DatexSample.ndwV2LifecycleEnd.text()
            .replacingOccurrences(of: "<validityTimeSpecification><overallStartTime>2022-05-12T06:48:05.000Z</overallStartTime>",
                                  with: "<overallStartTime>2022-05-12T06:48:05.000Z</overallStartTime><validityTimeSpecification>")
        #expect(try read(Array(moved.utf8), schema: DatexSchema.v2).records[0][F.startTime.rawValue] == nil)
    }

    /// Comments in several languages, each value with its `lang`, in document order.
    @Test func commentInSeveralLanguages() throws {
        let text = try DatexSample.fiV3.text().replacingOccurrences(
            of: "</com:value>\n                    </com:values>",
            with: "</com:value><com:value lang=\"en\"> Ferry traffic interrupted.\n</com:value><com:value lang=\"sv\"/></com:values>")
        let result = try readInEveryChunking(Array(text.utf8), schema: DatexSchema.v3)
        let comments = result.records[0].occurrences(of: F.comment.rawValue)
        #expect(comments.map(\.attributes) == [["fi"], ["en"], ["sv"]])
        #expect(comments[1].text == "Ferry traffic interrupted.")
        #expect(comments[2].text == nil)
        #expect(comments[0].text?.hasPrefix("Tie 15358") == true)
        #expect(result.records[0].problems.isEmpty)
    }

    /// A linear location: every coordinate, in document order.
    @Test func everyCoordinateOfALinearLocation() throws {
        let points = [("52.1", "4.1"), ("52.2", "4.2"), ("52.3", "4.3")]
            .map { "<loc:pointCoordinates><loc:latitude>\($0.0)</loc:latitude><loc:longitude>\($0.1)</loc:longitude></loc:pointCoordinates>" }
            .joined()
        let text = try DatexSample.ndwV3Push.text().replacingOccurrences(
            of: "<loc:pointCoordinates><loc:latitude>52.413273</loc:latitude><loc:longitude>4.681905</loc:longitude></loc:pointCoordinates>",
            with: "<loc:linearCoordinates>\(points)</loc:linearCoordinates>")
        let result = try readInEveryChunking(Array(text.utf8), schema: DatexSchema.v3)
        #expect(Self.texts(result.records[0], .latitude) == ["52.1", "52.2", "52.3"])
        #expect(Self.texts(result.records[0], .longitude) == ["4.1", "4.2", "4.3"])
        #expect(result.records[0].occurrences.map(\.field) == [F.locationKind.rawValue] + [F.latitude.rawValue, F.longitude.rawValue]
                    + [F.latitude.rawValue, F.longitude.rawValue] + [F.latitude.rawValue, F.longitude.rawValue])
    }

    /// An `xsi:type` whose prefix is not declared reads as nil with a problem on that record;
    /// the other records are read as usual.
    @Test func undeclaredPrefixInXsiTypeIsAProblemOfThatRecord() throws {
        let text = try DatexSample.ndwV3Container.text()
            .replacingOccurrences(of: "xsi:type=\"sit:GeneralNetworkManagement\" id=\"BMS01_NLALK002340559600427_114561731_01\"",
                                  with: "xsi:type=\"zz:GeneralNetworkManagement\" id=\"BMS01_NLALK002340559600427_114561731_01\"")
        let result = try read(Array(text.utf8), schema: DatexSchema.v3)
        #expect(result.records.count == 20)
        #expect(result.records[1].attributes == ["BMS01_NLALK002340559600427_114561731_01", "1", nil])
        #expect(result.records[1].problems == ["situationRecord/@xsi:type 'zz:GeneralNetworkManagement' uses the undeclared prefix 'zz'"])
        #expect(result.records.enumerated().allSatisfy { $0.offset == 1 || $0.element.problems.isEmpty })
    }

    /// QName resolution follows the declarations in scope at the element: a redeclared prefix
    /// wins inside, the default namespace applies to unprefixed values, `xmlns=""` removes it.
    @Test func qnameResolutionFollowsScope() throws {
        let schema = XMLRecordSchema(
            recordElements: [XMLName("r")],
            fields: [XMLField(XMLName("k", namespaceURI: "urn:q"), cardinality: .repeated, attributes: [.xsiType])],
            recordAttributes: [.xsiType])
        let xml = """
            <d xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:p="urn:one" xmlns:q="urn:q"><r xsi:type=" p:A ">\
            <q:k xsi:type="p:B"/><q:k xmlns:p="urn:two" xsi:type="p:B"/><q:k xmlns="urn:default" xsi:type="C"/>\
            <q:k xsi:type="C"/><q:k xsi:type="xml:D"/><q:k xsi:type="a:b:c"/><q:k xsi:type=":x"/><q:k/></r></d>
            """
        let result = try readInEveryChunking(Array(xml.utf8), schema: schema)
        let r = result.records[0]
        #expect(r.attributes == ["{urn:one}A"])
        #expect(r.occurrences.map(\.attributes) == [["{urn:one}B"], ["{urn:two}B"], ["{urn:default}C"], ["C"],
                                                     ["{http://www.w3.org/XML/1998/namespace}D"], [nil], [nil], [nil]])
        #expect(r.problems == ["k/@xsi:type 'a:b:c' is not a QName", "k/@xsi:type ':x' is not a QName"])
    }
}
