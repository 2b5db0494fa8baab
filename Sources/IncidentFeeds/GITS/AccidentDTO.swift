import IncidentXML

/// One GITS `itemList` record, wire-shaped: the provider's field names and text as sent
/// (trimmed; nil when empty). Mapped once into an `Incident` by ``GITSMapper``.
public struct AccidentDTO: Equatable, Sendable {
    public var routeId: String?
    public var linkId: String?
    public var spotId: String?
    /// Unique incident id (e.g. `202303216347`).
    public var regSeq: String?
    /// `yyyy-MM-dd HH:mm:ss`, Korea time, as are the other dates.
    public var confirmDate: String?
    public var startDate: String?
    public var estEndDate: String?
    /// Empty while the incident is active.
    public var endDate: String?
    /// Lanes closed (`4차로`, `갓길`, `전차로`).
    public var restrictType: String?
    /// Description starting with a bracketed kind: `[차량고장] 강변북로 (구리방향) …`.
    public var inciDesc: String?
    /// Road name.
    public var inciPlace1: String?
    /// Direction and section: `(구리방향) 잠실대교 → 잠실철교`.
    public var inciPlace2: String?
    /// WGS84 longitude, decimal degrees.
    public var coord_x: String?
    /// WGS84 latitude, decimal degrees.
    public var coord_y: String?
    /// The line of the document where the record started (for error messages).
    public var line: Int = 0
    /// What is wrong with the record as read (a field repeated), from the XML reader.
    public var problems: [String] = []

    public init(routeId: String? = nil, linkId: String? = nil, spotId: String? = nil, regSeq: String? = nil,
                confirmDate: String? = nil, startDate: String? = nil, estEndDate: String? = nil,
                endDate: String? = nil, restrictType: String? = nil, inciDesc: String? = nil,
                inciPlace1: String? = nil, inciPlace2: String? = nil, coord_x: String? = nil,
                coord_y: String? = nil, line: Int = 0, problems: [String] = []) {
        self.routeId = routeId
        self.linkId = linkId
        self.spotId = spotId
        self.regSeq = regSeq
        self.confirmDate = confirmDate
        self.startDate = startDate
        self.estEndDate = estEndDate
        self.endDate = endDate
        self.restrictType = restrictType
        self.inciDesc = inciDesc
        self.inciPlace1 = inciPlace1
        self.inciPlace2 = inciPlace2
        self.coord_x = coord_x
        self.coord_y = coord_y
        self.line = line
        self.problems = problems
    }

    /// The fields as sent, `name=value`, for the excerpt of a record set aside.
    var fields: [(String, String?)] {
        [("regSeq", regSeq), ("routeId", routeId), ("linkId", linkId), ("spotId", spotId), ("confirmDate", confirmDate),
         ("startDate", startDate), ("estEndDate", estEndDate), ("endDate", endDate), ("restrictType", restrictType),
         ("inciDesc", inciDesc), ("inciPlace1", inciPlace1), ("inciPlace2", inciPlace2), ("coord_x", coord_x), ("coord_y", coord_y)]
    }
}
