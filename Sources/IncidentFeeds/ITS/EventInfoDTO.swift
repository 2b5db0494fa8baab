/// One ITS `eventInfo` record, wire-shaped: the provider's field names, values as text
/// (trimmed; nil when empty), whether they arrived as JSON strings, JSON numbers or XML text.
public struct EventInfoDTO: Equatable, Sendable {
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
    /// Where the record was: `record at line 12` (XML) or `items[3]` (JSON, 1-based).
    public var position: String = ""
    /// What is wrong with the record as read (a repeated field or key), from the reader.
    public var problems: [String] = []
    /// The record was over the reader's per-record limit: only its short values were read,
    /// which the id's parts are.
    public var isOversized = false

    /// The provider's field names, in the order of ``init(values:position:problems:)`` and ``fields``.
    static let fieldNames = ["type", "eventType", "eventDetailType", "startDate", "endDate", "coordX", "coordY", "linkId",
                             "roadName", "roadNo", "roadDrcType", "lanesBlockType", "lanesBlocked", "message"]

    public init(type: String? = nil, eventType: String? = nil, eventDetailType: String? = nil,
                startDate: String? = nil, endDate: String? = nil, coordX: String? = nil, coordY: String? = nil,
                linkId: String? = nil, roadName: String? = nil, roadNo: String? = nil, roadDrcType: String? = nil,
                lanesBlockType: String? = nil, lanesBlocked: String? = nil, message: String? = nil, position: String = "",
                problems: [String] = []) {
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
        self.problems = problems
    }

    /// A record from its values in ``fieldNames`` order (missing values are nil).
    init(values: [String?], position: String, problems: [String], isOversized: Bool = false) {
        func v(_ i: Int) -> String? { values.indices.contains(i) ? values[i] : nil }
        self.init(type: v(0), eventType: v(1), eventDetailType: v(2), startDate: v(3), endDate: v(4), coordX: v(5), coordY: v(6),
                  linkId: v(7), roadName: v(8), roadNo: v(9), roadDrcType: v(10), lanesBlockType: v(11), lanesBlocked: v(12),
                  message: v(13), position: position, problems: problems)
        self.isOversized = isOversized
    }

    /// The fields as sent, `name=value`, for the excerpt of a record set aside.
    var fields: [(String, String?)] {
        zip(Self.fieldNames, [type, eventType, eventDetailType, startDate, endDate, coordX, coordY, linkId, roadName, roadNo,
                              roadDrcType, lanesBlockType, lanesBlocked, message]).map { ($0, $1) }
    }
}
