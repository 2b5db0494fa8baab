import Foundation
import IncidentXML
import Testing
import TestSupport

/// Schemas of the feeds the product reads, as the providers will configure them.
enum Schemas {
    static let gitsFields = ["routeId", "linkId", "spotId", "regSeq", "confirmDate", "startDate", "estEndDate",
                             "endDate", "restrictType", "inciDesc", "inciPlace1", "inciPlace2", "coord_x", "coord_y"]
    static func gitsIndex(_ name: String) -> Int { gitsFields.firstIndex(of: name) ?? -1 }
    static let gits = XMLRecordSchema(
        recordElements: [XMLName("itemList")],
        fields: gitsFields.map { XMLName($0) },
        envelopeFields: [XMLName("headerCd"), XMLName("headerMsg"), XMLName("itemCount")])

    static let eventFields = ["type", "eventType", "eventDetailType", "startDate", "endDate", "coordX", "coordY",
                              "linkId", "roadName", "roadNo", "roadDrcType", "lanesBlockType", "lanesBlocked", "message"]
    static func eventIndex(_ name: String) -> Int { eventFields.firstIndex(of: name) ?? -1 }
    /// ITS eventInfo in both XML envelopes: `response/header/body/items/item*` and `response/data*`.
    static let itsEvent = XMLRecordSchema(
        recordElements: [XMLName("item"), XMLName("data")],
        fields: eventFields.map { XMLName($0) },
        envelopeFields: [XMLName("resultCode"), XMLName("resultMsg"), XMLName("totalCount"), XMLName("datacount")])

    static let cctvFields = ["roadsectionid", "filecreatetime", "cctvtype", "cctvurl", "cctvresolution", "coordy",
                             "cctvformat", "cctvname", "coordx"]
    static let itsCCTV = XMLRecordSchema(
        recordElements: [XMLName("data")],
        fields: cctvFields.map { XMLName($0) },
        envelopeFields: [XMLName("coordtype"), XMLName("datacount")])

    /// data.go.kr gateway error envelope; also read alongside any provider schema.
    static let gateway = XMLRecordSchema(
        recordElements: [XMLName("item")],
        fields: [XMLName("id")],
        envelopeFields: [XMLName("errMsg"), XMLName("returnAuthMsg"), XMLName("returnReasonCode")])

    /// DATEX II v2 read with single-name fields: names match only in their exact namespace, so
    /// the unqualified `situationRecordFirstSupplierVersionTime` and `country` read nothing in
    /// this document (its default namespace is DATEX II's).
    static let datex2NS = "http://datex2.eu/schema/2/2_0"
    static let datex2 = XMLRecordSchema(
        recordElements: [XMLName("situationRecord", namespaceURI: datex2NS)],
        fields: [XMLName("situationRecordCreationTime", namespaceURI: datex2NS),
                 XMLName("overallStartTime", namespaceURI: datex2NS),
                 XMLName("value", namespaceURI: datex2NS),
                 XMLName("accidentType", namespaceURI: datex2NS),
                 XMLName("specificLocation", namespaceURI: datex2NS),
                 XMLName("situationRecordFirstSupplierVersionTime")],
        envelopeFields: [XMLName("publicationTime", namespaceURI: datex2NS), XMLName("country")],
        recordAttributes: [XMLName("id"), XMLName("version"),
                           XMLName("type", namespaceURI: "http://www.w3.org/2001/XMLSchema-instance")])

    static let sitNS = "http://datex2.eu/schema/3/situation"
    static let comNS = "http://datex2.eu/schema/3/common"
    static let locNS = "http://datex2.eu/schema/3/locationReferencing"
    static let datex3 = XMLRecordSchema(
        recordElements: [XMLName("situationRecord", namespaceURI: sitNS)],
        fields: [XMLName("situationRecordCreationTime", namespaceURI: sitNS),
                 XMLName("situationRecordFirstSupplierVersionTime", namespaceURI: sitNS),
                 XMLName("overallStartTime", namespaceURI: comNS),
                 XMLName("overallEndTime", namespaceURI: comNS),
                 XMLName("value", namespaceURI: comNS),
                 XMLName("specificLocation", namespaceURI: locNS),
                 XMLName("severity", namespaceURI: sitNS),
                 // Same local name, wrong namespace: must stay nil.
                 XMLName("severity", namespaceURI: comNS)],
        envelopeFields: [XMLName("publicationTime", namespaceURI: comNS), XMLName("country", namespaceURI: comNS)],
        recordAttributes: [XMLName("id"), XMLName("type", namespaceURI: "http://www.w3.org/2001/XMLSchema-instance")])
}

/// Everything a reader produced for one document.
struct ReadResult: Equatable, CustomStringConvertible {
    var records: [XMLRecord] = []
    var envelopes: [XMLEnvelope] = []   // the envelope delivered with each record
    var finalEnvelope = XMLEnvelope(values: [])

    var repairs = 0                     // the reader's document total after finish()
    var encoding: String?

    var description: String {
        "\(records.count) records: \(records.map(\.values)) problems \(records.map(\.problems)) envelope \(finalEnvelope)"
    }
}

/// Reads `bytes` with `schema`, handing it to the reader in the given pieces, then `finish()`.
func read(_ bytes: [UInt8], schema: XMLRecordSchema, limits: XMLLimits = .default, charset: String? = nil,
          pieces: [Range<Int>]? = nil) throws -> ReadResult {
    var result = ReadResult()
    let reader = XMLRecordReader(schema: schema, limits: limits) { record, envelope in
        result.records.append(record)
        result.envelopes.append(envelope)
    }
    reader.charset = charset
    try bytes.withUnsafeBytes { raw in
        for range in pieces ?? [0..<bytes.count] {
            try reader.parse(UnsafeRawBufferPointer(rebasing: raw[range]))
        }
    }
    try reader.finish()
    result.finalEnvelope = reader.envelope
    result.repairs = reader.repairs
    result.encoding = reader.encoding
    return result
}

/// Reads `bytes` in consecutive chunks of `size` bytes.
func read(_ bytes: [UInt8], schema: XMLRecordSchema, charset: String? = nil, chunkSize size: Int) throws -> ReadResult {
    let pieces = stride(from: 0, to: bytes.count, by: size).map { $0..<min($0 + size, bytes.count) }
    return try read(bytes, schema: schema, charset: charset, pieces: pieces)
}

/// Reads `text` (UTF-8) whole.
func read(_ text: String, schema: XMLRecordSchema, limits: XMLLimits = .default) throws -> ReadResult {
    try read(Array(text.utf8), schema: schema, limits: limits)
}

/// Reads `bytes` whole, then in every chunk size from 1 to 64 bytes, and at every split point
/// (every `max(1, count / maxSplits)`-th one for long documents): each reading must give
/// exactly the same result, which is returned.
func readInEveryChunking(_ bytes: [UInt8], schema: XMLRecordSchema, charset: String? = nil,
                         maxSplits: Int = 4000, sourceLocation: SourceLocation = #_sourceLocation) throws -> ReadResult {
    let whole = try read(bytes, schema: schema, charset: charset)
    for size in 1...64 {
        let chunked = try read(bytes, schema: schema, charset: charset, chunkSize: size)
        #expect(chunked == whole, "chunk size \(size)", sourceLocation: sourceLocation)
        if chunked != whole { break }
    }
    for split in stride(from: 0, through: bytes.count, by: max(1, bytes.count / maxSplits)) {
        let result = try read(bytes, schema: schema, charset: charset, pieces: [0..<split, split..<bytes.count])
        #expect(result == whole, "split at \(split)", sourceLocation: sourceLocation)
        if result != whole { break }
    }
    return whole
}

/// The error reading `bytes` throws (in one piece), as `XMLParseError`.
func readError(_ bytes: [UInt8], schema: XMLRecordSchema, charset: String? = nil) -> XMLParseError? {
    caught { _ = try read(bytes, schema: schema, charset: charset) } as? XMLParseError
}

/// The error `body` throws, or nil.
func caught(_ body: () throws -> Void) -> (any Error)? {
    do { try body() } catch { return error }
    return nil
}

func loadBytes(_ url: URL) throws -> [UInt8] {
    Array(try Data(contentsOf: url))
}

/// A document the product reads: a real recorded response or one of our fixtures.
struct FeedDocument: Sendable, CustomTestStringConvertible {
    let name: String
    let url: URL
    let schema: XMLRecordSchema
    let expectedRecords: Int
    var testDescription: String { name }

    static let all: [FeedDocument] = [
        FeedDocument(name: "real gits", url: TestPaths.sharedFeed("gg_gits/getIncidentInfo_20230321.xml"), schema: Schemas.gits, expectedRecords: 4),
        FeedDocument(name: "real its cctv", url: TestPaths.sharedFeed("its_national/cctvInfo_xml_2items.xml"), schema: Schemas.itsCCTV, expectedRecords: 2),
        FeedDocument(name: "real datagokr gateway error", url: TestPaths.sharedFeed("datagokr/gateway_error_30_SERVICE_KEY_IS_NOT_REGISTERED_doc_quoted.xml"), schema: Schemas.gateway, expectedRecords: 0),
        FeedDocument(name: "real datex2 v2.2", url: TestPaths.sharedFeed("datex2_fi_digitraffic/situation_v2_2_accident_20170810.xml"), schema: Schemas.datex2, expectedRecords: 3),
        FeedDocument(name: "real datex2 v3.5", url: TestPaths.sharedFeed("datex2_fi_digitraffic/situation_v3_5_GUID50456943.xml"), schema: Schemas.datex3, expectedRecords: 1),
        FeedDocument(name: "real datex2 v2.2 path schema", url: TestPaths.sharedFeed(DatexSample.fiV2.path), schema: DatexSchema.v2, expectedRecords: 3),
        FeedDocument(name: "real datex2 v3.5 path schema", url: TestPaths.sharedFeed(DatexSample.fiV3.path), schema: DatexSchema.v3, expectedRecords: 1),
        FeedDocument(name: "real ndw v2 snapshot", url: TestPaths.sharedFeed(DatexSample.ndwV2Snapshot.path), schema: DatexSchema.v2, expectedRecords: 36),
        FeedDocument(name: "real ndw v2 lifecycle end", url: TestPaths.sharedFeed(DatexSample.ndwV2LifecycleEnd.path), schema: DatexSchema.v2, expectedRecords: 1),
        FeedDocument(name: "real ndw v3 message container", url: TestPaths.sharedFeed(DatexSample.ndwV3Container.path), schema: DatexSchema.v3, expectedRecords: 20),
        FeedDocument(name: "real ndw v3 stateful push", url: TestPaths.sharedFeed(DatexSample.ndwV3Push.path), schema: DatexSchema.v3, expectedRecords: 1),
        FeedDocument(name: "gits_multi", url: TestPaths.fixture("xml/gits_multi.xml"), schema: Schemas.gits, expectedRecords: 3),
        FeedDocument(name: "gits_multi_crlf", url: TestPaths.fixture("xml/gits_multi_crlf.xml"), schema: Schemas.gits, expectedRecords: 3),
        FeedDocument(name: "gits_multi_euckr", url: TestPaths.fixture("xml/gits_multi_euckr.xml"), schema: Schemas.gits, expectedRecords: 3),
        FeedDocument(name: "gits_multi_cp949", url: TestPaths.fixture("xml/gits_multi_cp949.xml"), schema: Schemas.gits, expectedRecords: 3),
        FeedDocument(name: "cp949_labeled_euckr", url: TestPaths.fixture("xml/cp949_labeled_euckr.xml"), schema: Schemas.gits, expectedRecords: 1),
        FeedDocument(name: "gits_error_99", url: TestPaths.fixture("xml/gits_error_99.xml"), schema: Schemas.gits, expectedRecords: 0),
        FeedDocument(name: "its_eventinfo_items", url: TestPaths.fixture("xml/its_eventinfo_items.xml"), schema: Schemas.itsEvent, expectedRecords: 3),
        FeedDocument(name: "its_eventinfo_data", url: TestPaths.fixture("xml/its_eventinfo_data.xml"), schema: Schemas.itsEvent, expectedRecords: 3),
        FeedDocument(name: "its_eventinfo_error", url: TestPaths.fixture("xml/its_eventinfo_error.xml"), schema: Schemas.itsEvent, expectedRecords: 0),
    ]
}
