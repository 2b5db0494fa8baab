import Foundation
import IncidentCore
import IncidentNetworking
import IncidentXML

/// Gyeonggi-do GITS `getIncidentInfo`: XML only, one `itemList` per incident.
///
/// Facts (GITS open API guide and the recorded response of 2023-03-21): `headerCd` 0 means OK and
/// other values are errors sent with HTTP 200 (``KoreanAPIEnvelope`` lists the codes);
/// `itemCount` declares the number of records (a response holding fewer cannot clear); times are
/// `yyyy-MM-dd HH:mm:ss` Korea time (UTC+9); `coord_x` is the WGS84 longitude and `coord_y` the
/// latitude.
public enum GITSProvider: FeedProvider {
    public static let name = "gits"

    /// GITS always answers the whole province, in XML: it takes no options.
    public static let options: [any ProviderOptionDeclaration] = []
    public static let keyParameterNames = [GITSRouter.keyParameter]

    public static func router(for source: SourceDefinition) throws -> any Router {
        let key = try source.requiredKey()
        return GITSRouter.getIncidentInfo(key: key, baseURL: source.baseURL)
    }

    public static func read(file: URL, contentType: String?, source: String, _ body: (FeedRecord) throws -> Void) throws -> ResponseVerdict {
        let (kind, head) = try BodySniffer.sniff(file)
        guard kind == .xml else {
            throw BodySniffer.unexpected(kind, head: head, contentType: contentType, provider: name,
                                         expected: "GITS XML (ServiceResult)")
        }
        return try GITSRecordReader.format.read(file: file, contentType: contentType,
                                                map: { GITSMapper.record(from: $0, source: source) }, body)
    }
}
