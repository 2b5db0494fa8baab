/// One ITS `eventInfo` record, wire-shaped: the provider's field names, values as text
/// (trimmed; nil when empty), whether they arrived as JSON strings, JSON numbers or XML text.
public struct EventInfoDTO: Equatable, Sendable, Decodable {
    /// Road class label (`고속도로`, `국도`).
    public var type: String?
    /// `교통사고`, `공사`, `작업`, `기상`, `기타돌발`, …
    public var eventType: String?
    /// Finer kind (`고장`, `충돌사고`, `시설물보수작업`, …).
    public var eventDetailType: String?
    /// `yyyyMMddHHmmss`, Korea time.
    public var startDate: String?
    /// `yyyyMMddHHmmss`, Korea time; empty while active.
    public var endDate: String?
    /// WGS84 longitude.
    public var coordX: String?
    /// WGS84 latitude.
    public var coordY: String?
    public var linkId: String?
    public var roadName: String?
    public var roadNo: String?
    /// Direction label (`기점`, `종점`, `시점방향`, `종점방향`).
    public var roadDrcType: String?
    public var lanesBlockType: String?
    /// Lanes blocked (`2차로 차단`).
    public var lanesBlocked: String?
    public var message: String?
    /// Where the record was: XML line, or JSON position (1-based) in `items`.
    public var position: Int = 0

    enum CodingKeys: String, CodingKey, CaseIterable {
        case type, eventType, eventDetailType, startDate, endDate, coordX, coordY, linkId, roadName, roadNo,
             roadDrcType, lanesBlockType, lanesBlocked, message
    }

    public init(type: String? = nil, eventType: String? = nil, eventDetailType: String? = nil,
                startDate: String? = nil, endDate: String? = nil, coordX: String? = nil, coordY: String? = nil,
                linkId: String? = nil, roadName: String? = nil, roadNo: String? = nil, roadDrcType: String? = nil,
                lanesBlockType: String? = nil, lanesBlocked: String? = nil, message: String? = nil, position: Int = 0) {
        self.type = type
        self.eventType = eventType
        self.eventDetailType = eventDetailType
        self.startDate = startDate
        self.endDate = endDate
        self.coordX = coordX
        self.coordY = coordY
        self.linkId = linkId
        self.roadName = roadName
        self.roadNo = roadNo
        self.roadDrcType = roadDrcType
        self.lanesBlockType = lanesBlockType
        self.lanesBlocked = lanesBlocked
        self.message = message
        self.position = position
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(type: try c.lenient(.type), eventType: try c.lenient(.eventType),
                  eventDetailType: try c.lenient(.eventDetailType), startDate: try c.lenient(.startDate),
                  endDate: try c.lenient(.endDate), coordX: try c.lenient(.coordX), coordY: try c.lenient(.coordY),
                  linkId: try c.lenient(.linkId), roadName: try c.lenient(.roadName), roadNo: try c.lenient(.roadNo),
                  roadDrcType: try c.lenient(.roadDrcType), lanesBlockType: try c.lenient(.lanesBlockType),
                  lanesBlocked: try c.lenient(.lanesBlocked), message: try c.lenient(.message))
    }
}
