import IncidentXML

/// One DATEX II `situationRecord`, wire-shaped: the values as the publication wrote them
/// (trimmed text; nil when absent or empty), in DATEX II's own terms, the same for 2.x and 3.x.
/// Mapped once into an `Incident` by ``DATEX2Mapper``.
///
/// Field meanings are the DATEX II schemas' (2.2.3 `DATEXIISchema_2_2_3.xsd`; 3.1
/// `DATEXII_3_Situation.xsd`, `_Common.xsd`, `_LocationReferencing.xsd`). `severity`,
/// `probabilityOfOccurrence`, the versions and `causeType` have no `Incident` column: they
/// are kept here for a later `details` field.
public struct DATEX2Record: Equatable, Sendable {
    /// The DATEX II major version, from the record element's namespace.
    public enum ModelVersion: String, Equatable, Sendable {
        case v2 = "2"
        case v3 = "3"
    }

    /// One text of a `generalPublicComment`, in one language.
    public struct Text: Equatable, Sendable {
        /// The `lang` of the value, else the publication's `lang`; nil when neither is given.
        public var language: String?
        public var text: String
    }

    /// A latitude/longitude pair as written (WGS84 decimal degrees in DATEX II).
    public struct CoordinateText: Equatable, Sendable {
        public var latitude: String?
        public var longitude: String?
    }

    /// A 3.x `gmlLineString`: its `posList` (latitude longitude pairs, or triples with
    /// `srsDimension` 3) and reference system.
    public struct LineText: Equatable, Sendable {
        public var srsName: String?
        public var srsDimension: String?
        public var posList: String?
    }

    /// One location of the record: the record's own (2.x `groupOfLocations`, 3.x
    /// `locationReference`), or a member of its location group or itinerary. Coordinates
    /// inside it belong to it.
    public struct Location: Equatable, Sendable {
        /// The location's resolved `xsi:type` (`Point`, `Linear`, `loc:PointLocation`, …).
        public var type: String?
        /// `pointByCoordinates/pointCoordinates`.
        public var point = CoordinateText()
        /// 2.x `locationForDisplay`, 3.x `coordinatesForDisplay`.
        public var display = CoordinateText()
        /// A TPEG point location's `point/pointCoordinates`.
        public var tpegPoint = CoordinateText()
        /// A TPEG linear location's `from` and `to` coordinates.
        public var from = CoordinateText()
        public var to = CoordinateText()
        /// 3.x `gmlLineString`s.
        public var lines: [LineText] = []
    }

    /// An ALERT-C location reference: the location table and the table's location codes
    /// (primary, then secondary), with its direction.
    public struct AlertC: Equatable, Sendable {
        public var countryCode: String?
        public var tableNumber: String?
        public var tableVersion: String?
        public var direction: String?
        public var locations: [String] = []
    }

    /// A location code in an external referencing system (NDW: `RIS-index`).
    public struct ExternalReference: Equatable, Sendable {
        public var system: String?
        public var code: String?
    }

    public var modelVersion: ModelVersion
    /// `situation/@id`.
    public var situationID: String?
    /// `situation/@version` (2.x only; 3.x situations have no version).
    public var situationVersion: String?
    /// `situationRecord/@id`: stable across versions of the record.
    public var recordID: String?
    /// `situationRecord/@version`: grows with each new version of the record.
    public var recordVersion: String?
    /// The record's resolved `xsi:type`, in Clark notation `{namespace}Local` (see
    /// ``XMLAttribute``), e.g. `{http://datex2.eu/schema/3/situation}Accident`.
    public var recordType: String?
    public var creationTime: String?
    public var versionTime: String?
    /// `certain`, `probable` or `riskOf`.
    public var probabilityOfOccurrence: String?
    /// `highest`, `high`, `medium`, `low`, `lowest`, `none` or `unknown`.
    public var severity: String?
    /// `active`, `suspended`, `definedByValidityTimeSpec` (and 3.x `planned`).
    public var validityStatus: String?
    public var overallStartTime: String?
    public var overallEndTime: String?
    /// 2.x `management/lifeCycleManagement/end`: `true` when the situation record has ended
    /// (NDW sends it with `overallEndTime` set while still listing the record).
    public var lifeCycleEnd: String?
    /// 2.x `management/lifeCycleManagement/cancel`: `true` when the record was cancelled.
    public var lifeCycleCancel: String?
    /// `cause/causeType` (2.x `CauseTypeEnum`, 3.x `CauseTypeEnum`).
    public var causeType: String?
    /// The record's own detail type, when its kind has one the category table reads:
    /// `vehicleObstructionType`, `generalNetworkManagementType` or
    /// `roadOrCarriagewayOrLaneManagementType`.
    public var detailType: String?
    /// The `generalPublicComment`s, in document order, each with its texts in every language.
    public var comments: [[Text]] = []
    /// The record's locations: its own first, then group or itinerary members.
    public var locations: [Location] = []
    /// `linearElement/roadName` values and 3.x `roadInformation/roadName`, in document order.
    public var roadNames: [String] = []
    public var roadNumbers: [String] = []
    public var alertC: AlertC?
    public var tpegDirection: String?
    public var externalReferences: [ExternalReference] = []
    /// Why the record cannot be trusted as read (the XML reader's problems, and location
    /// values that contradict each other).
    public var problems: [String] = []
    /// Characters the XML reader replaced inside the record.
    public var repairs = 0
    /// The line of the record's start tag.
    public var line = 0

    public init(modelVersion: ModelVersion) {
        self.modelVersion = modelVersion
    }
}

extension DATEX2Record {
    /// Builds the record from what ``DATEX2Schema/schema`` read; `defaultLanguage` is the
    /// publication's `lang`, for comment values that give none.
    init(_ record: XMLRecord, defaultLanguage: String?) {
        let version = DATEX2Schema.Version(rawValue: record.recordElementIndex) ?? .v2
        self.init(modelVersion: version == .v2 ? .v2 : .v3)
        let index = DATEX2Schema.indexOf[version.rawValue]
        func single(_ field: DATEX2Schema.Field) -> String? { index[field].flatMap { record[$0] } }
        recordID = record.attributes[0]
        recordVersion = record.attributes[1]
        recordType = record.attributes[2]
        situationID = version == .v2 ? record.context[0] : record.context[2]
        situationVersion = version == .v2 ? record.context[1] : nil
        creationTime = single(.creationTime)
        versionTime = single(.versionTime)
        probabilityOfOccurrence = single(.probabilityOfOccurrence)
        severity = single(.severity)
        validityStatus = single(.validityStatus)
        overallStartTime = single(.overallStartTime)
        overallEndTime = single(.overallEndTime)
        lifeCycleEnd = single(.lifeCycleEnd)
        lifeCycleCancel = single(.lifeCycleCancel)
        causeType = single(.causeType)
        problems = record.problems
        repairs = record.repairs
        line = record.line
        readOccurrences(record.occurrences, defaultLanguage: defaultLanguage)
    }

    private mutating func readOccurrences(_ occurrences: [XMLOccurrence], defaultLanguage: String?) {
        var external = ExternalReference()
        var conflicts: [String] = []
        /// Sets a location value read once per location; a second one is a conflict.
        func set(_ value: String?, _ slot: inout String?, _ what: String) {
            guard let value else { return }
            if slot != nil { conflicts.append("a location has more than one \(what)") }
            slot = value
        }
        for occurrence in occurrences {
            let text = occurrence.text
            switch DATEX2Schema.fieldOfIndex[occurrence.field] {
            case .vehicleObstructionType, .generalNetworkManagementType, .roadOrCarriagewayOrLaneManagementType:
                if detailType == nil { detailType = text }
            case .comment:
                comments.append([])
            case .commentValue:
                guard let text else { continue }
                let value = Text(language: occurrence.attributes.first.flatMap { $0 } ?? defaultLanguage, text: text)
                if comments.isEmpty { comments.append([]) }
                comments[comments.count - 1].append(value)
            case .location, .groupMember, .itineraryMember:
                locations.append(Location(type: occurrence.attributes.first.flatMap { $0 }))
            case .pointLatitude: set(text, &lastLocation.point.latitude, "pointByCoordinates latitude")
            case .pointLongitude: set(text, &lastLocation.point.longitude, "pointByCoordinates longitude")
            case .displayLatitude: set(text, &lastLocation.display.latitude, "display latitude")
            case .displayLongitude: set(text, &lastLocation.display.longitude, "display longitude")
            case .tpegPointLatitude: set(text, &lastLocation.tpegPoint.latitude, "TPEG point latitude")
            case .tpegPointLongitude: set(text, &lastLocation.tpegPoint.longitude, "TPEG point longitude")
            case .fromLatitude: set(text, &lastLocation.from.latitude, "TPEG from latitude")
            case .fromLongitude: set(text, &lastLocation.from.longitude, "TPEG from longitude")
            case .toLatitude: set(text, &lastLocation.to.latitude, "TPEG to latitude")
            case .toLongitude: set(text, &lastLocation.to.longitude, "TPEG to longitude")
            case .lineString:
                let attributes = occurrence.attributes
                lastLocation.lines.append(LineText(srsName: attributes.first.flatMap { $0 },
                                                   srsDimension: attributes.dropFirst().first.flatMap { $0 }))
            case .posList:
                if lastLocation.lines.isEmpty { lastLocation.lines.append(LineText()) }
                set(text, &lastLocation.lines[lastLocation.lines.count - 1].posList, "posList in one gmlLineString")
            case .roadNameValue, .roadInformationName:
                if let text { roadNames.append(text) }
            case .roadNumber:
                if let text { roadNumbers.append(text) }
            case .alertCCountry: if alertC?.countryCode == nil { setAlertC(\.countryCode, text) }
            case .alertCTable: if alertC?.tableNumber == nil { setAlertC(\.tableNumber, text) }
            case .alertCTableVersion: if alertC?.tableVersion == nil { setAlertC(\.tableVersion, text) }
            case .alertCDirection: if alertC?.direction == nil { setAlertC(\.direction, text) }
            case .alertCLocation:
                if let text {
                    if alertC == nil { alertC = AlertC() }
                    alertC?.locations.append(text)
                }
            case .tpegDirection:
                if tpegDirection == nil { tpegDirection = text }
            case .externalCode:
                if external.code != nil { externalReferences.append(external); external = ExternalReference() }
                external.code = text
            case .externalSystem:
                if external.system != nil { externalReferences.append(external); external = ExternalReference() }
                external.system = text
            case .creationTime, .versionTime, .probabilityOfOccurrence, .severity, .validityStatus, .overallStartTime,
                 .overallEndTime, .lifeCycleEnd, .lifeCycleCancel, .causeType:
                break  // single values, read above
            }
        }
        if external.code != nil || external.system != nil { externalReferences.append(external) }
        problems += conflicts
    }

    private mutating func setAlertC(_ keyPath: WritableKeyPath<AlertC, String?>, _ value: String?) {
        guard let value else { return }
        if alertC == nil { alertC = AlertC() }
        alertC?[keyPath: keyPath] = value
    }

    /// The location being read: the last one started (coordinates outside any location
    /// element start one with no type).
    private var lastLocation: Location {
        get { locations.last ?? Location() }
        set {
            if locations.isEmpty { locations.append(newValue) } else { locations[locations.count - 1] = newValue }
        }
    }
}
