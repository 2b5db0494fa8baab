import Foundation
import IncidentCore
import IncidentNetworking
import IncidentXML

/// Gyeonggi-do GITS `getIncidentInfo`: XML only, one `itemList` per incident.
///
/// Facts (GITS open API guide and the recorded response of 2023-03-21): `headerCd` 0 means OK and
/// other values are errors sent with HTTP 200. GITS answers in the `ServiceResult/msgHeader`
/// template of the Korean bus-information APIs (same envelope, same "정상적으로 처리되었습니다."
/// message), whose codes are read here: 4 no result (an empty, complete answer), 5/6/7 key
/// missing, unregistered or suspended, 8 request limit exceeded, others errors.
/// `itemCount` is not trusted (records are counted as read); times are `yyyy-MM-dd HH:mm:ss` Korea time (UTC+9); `coord_x` is the WGS84
/// longitude and `coord_y` the latitude.
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
        try ParsePipeline.run(produce: { emit in try GITSRecordReader.read(file: file, emit) },
                              consume: { dto in try body(.incident(try GITSMapper.incident(from: dto, source: source))) })
        return .complete
    }
}
