import IncidentCore

/// Maps a ``DATEX2Record`` to an `Incident`, or sets it aside with the reason. DATEX II
/// quirks end here. Facts are from the DATEX II 2.2.3 and 3.1 schemas (see ``DATEX2Namespace``)
/// and the recorded Fintraffic and NDW publications.
///
/// - External id: `situationID/recordID` (`GUID50013339/GUID5001357701`). Both ids stay the
///   same across versions of a record; `@version` changes with each update (it is kept in the
///   record, not in the id). A record without either id is set aside with no id.
/// - Category: ``DATEX2Categories``; `providerCategory` is the record's `xsi:type`: its local
///   name for DATEX II's own kinds (`Accident`, `GeneralNetworkManagement`), Clark notation
///   `{namespace}Local` for a kind from another namespace (a national extension).
/// - Times (`xs:dateTime`, usually with `Z` or an offset; without one they are read in the
///   source's `timeZone`): `overallStartTime` → `startedAt`, `situationRecordCreationTime` →
///   `confirmedAt`. `overallEndTime` → `endedAt` when the record is over, else
///   `expectedEndAt`. Over means: 2.x `lifeCycleManagement/end` or `cancel` is `true` (NDW's way
///   of saying a situation ended while still listing it; `endedAt` is then `overallEndTime`,
///   else the record's version time), or `validityStatus` is `definedByValidityTimeSpec` and
///   `overallEndTime` is not after the publication time (the time specification itself says it
///   has ended). `active`, `suspended` and `planned` records only expect their end.
/// - Validity: `validityStatus` `planned` or `suspended` → `validity` (the incident's status is
///   then planned until its `overallStartTime`, or suspended; see `IncidentStatus`).
/// - Description: the `generalPublicComment` texts. A comment in one language is its text;
///   a comment in several gives one `lang: text` paragraph per language, the source's
///   `language` first when it is one of them, the others in document order. Comments are
///   separated by a blank line. Each line is trimmed: the indentation is the XML's, not the
///   text's.
/// - Road: the first `linearElement/roadName` or 3.x `roadInformation/roadName`, else the
///   first `roadNumber`. Location: the external references (`RIS-index NLZAA002360561800012`)
///   and the ALERT-C reference (`ALERT-C 6/17 v1.11.33: 992 → 993`), joined by `; `.
///   Direction: the ALERT-C `alertCDirectionCoded`, else the TPEG `tpegDirection`.
/// - Geometry (WGS84): per location, a 3.x `gmlLineString` (`posList`, latitude first, in
///   ETRS89/WGS84) is a line; else TPEG `from` and `to` give its two ends; else one point:
///   `pointByCoordinates`, the TPEG point, or the display coordinates. One location: a
///   LineString, a MultiPoint of its two ends, or a Point. Several (a location group or an
///   itinerary): a MultiPoint when no member has a line, else a MultiLineString of the lines
///   and the two-ended members (lone points are then left out). ALERT-C-only locations
///   give no coordinate.
///
/// Set aside (`rejected`, with the reason and an excerpt): a record with problems from the XML
/// reader (a single field twice, an undeclared prefix), without an id, with a time that is not
/// `xs:dateTime`, with a coordinate that is not a number in WGS84 ranges or lacks its pair, or
/// with a `gmlLineString` in a reference system other than latitude/longitude ETRS89/WGS84.
public enum DATEX2Mapper {
    /// How a source reads its records: its `language` and `timeZone` options.
    public struct Settings: Sendable, Equatable {
        /// The language whose comment text comes first (`fi`, `en`); nil: document order.
        public var language: String?
        public var timeZone: ProviderTimeZone

        public init(language: String? = nil, timeZone: ProviderTimeZone = .utc) {
            self.language = language
            self.timeZone = timeZone
        }
    }

    /// The record's incident, or the record set aside.
    /// - Parameter publicationTime: the publication's `publicationTime`, read with `settings`.
    public static func map(_ record: DATEX2Record, publicationTime: UTCInstant?, settings: Settings,
                           source: String) -> FeedRecord {
        let id: String? = switch (record.situationID, record.recordID) {
        case let (situation?, recordID?): "\(situation)/\(recordID)"
        default: nil
        }
        func reject(_ reason: String) -> FeedRecord {
            .rejected(RejectedRecord(externalID: id, position: "situationRecord at line \(record.line)", reason: reason,
                                     fields: excerptFields(record)))
        }
        guard record.problems.isEmpty else { return reject(record.problems.joined(separator: "; ")) }
        guard let id else {
            return reject(record.recordID == nil ? "the situationRecord has no id" : "the situationRecord is not inside a situation with an id")
        }
        do throws(RecordProblem) {
            var incident = Incident(
                source: source, externalID: id,
                category: DATEX2Categories.category(recordType: record.recordType, detailType: record.detailType,
                                                    causeType: record.causeType),
                providerCategory: record.recordType.map(providerCategory),
                description: description(record.comments, preferring: settings.language),
                road: record.roadNames.first ?? record.roadNumbers.first,
                location: locationText(record),
                direction: record.alertC?.direction ?? record.tpegDirection,
                confirmedAt: try time(record.creationTime, "situationRecordCreationTime", settings))
            _ = try time(record.versionTime, "situationRecordVersionTime", settings)
            incident.startedAt = try time(record.overallStartTime, "overallStartTime", settings)
            let end = try time(record.overallEndTime, "overallEndTime", settings)
            if isOver(record, end: end, publicationTime: publicationTime) {
                let versionTime = try time(record.versionTime, "situationRecordVersionTime", settings)
                incident.endedAt = end ?? versionTime
            } else {
                incident.expectedEndAt = end
            }
            incident.validity = record.validityStatus.flatMap { IncidentValidity(rawValue: $0) }
            incident.setGeometry(try geometry(record.locations))
            return .incident(incident)
        } catch {
            return reject(error.text)
        }
    }

    /// Whether the record says it is over (see the type's documentation).
    static func isOver(_ record: DATEX2Record, end: UTCInstant?, publicationTime: UTCInstant?) -> Bool {
        if isTrue(record.lifeCycleEnd) || isTrue(record.lifeCycleCancel) { return true }
        guard record.validityStatus == "definedByValidityTimeSpec", let end, let publicationTime else { return false }
        return end <= publicationTime
    }

    /// `xs:boolean` true: `true` or `1`.
    static func isTrue(_ text: String?) -> Bool { text == "true" || text == "1" }

    static func time(_ text: String?, _ field: String, _ settings: Settings) throws(RecordProblem) -> UTCInstant? {
        guard let text else { return nil }
        guard let instant = settings.timeZone.instant(iso8601: text) else {
            throw RecordProblem(text: "has \(field) '\(text)', not an xs:dateTime")
        }
        return instant
    }

    /// The local name of a DATEX II kind (`Accident` from `{http://datex2.eu/schema/3/situation}Accident`,
    /// `{http://datex2.eu/schema/2/2_0}Accident` or a bare `Accident`); nil for a kind in
    /// another namespace.
    static func datexLocalName(_ resolved: String) -> String? {
        guard resolved.hasPrefix("{") else { return resolved }
        for namespace in [DATEX2Namespace.situation, DATEX2Namespace.v2] where resolved.hasPrefix("{\(namespace)}") {
            return String(resolved.dropFirst(namespace.utf8.count + 2))
        }
        return nil
    }

    static func providerCategory(_ resolved: String) -> String {
        datexLocalName(resolved) ?? resolved
    }

    // MARK: Text

    static func description(_ comments: [[DATEX2Record.Text]], preferring language: String?) -> String? {
        let paragraphs = comments.compactMap { values -> String? in
            guard values.count > 1 else { return values.first.map { trimmedLines($0.text) } }
            let preferred = values.filter { language != nil && $0.language == language }
            let others = values.filter { language == nil || $0.language != language }
            return (preferred + others).map { "\($0.language ?? "?"): \(trimmedLines($0.text))" }.joined(separator: "\n\n")
        }
        return paragraphs.isEmpty ? nil : paragraphs.joined(separator: "\n\n")
    }

    /// Each line without its leading and trailing spaces, tabs and CRs. Works on the UTF-8
    /// bytes (all three are ASCII): it runs for every record.
    static func trimmedLines(_ text: String) -> String {
        let bytes = Array(text.utf8)
        guard bytes.contains(0x0A) else { return text }
        func isBlank(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0D }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var start = 0
        while start <= bytes.count {
            var end = start
            while end < bytes.count, bytes[end] != 0x0A { end += 1 }
            var first = start, last = end
            while first < last, isBlank(bytes[first]) { first += 1 }
            while last > first, isBlank(bytes[last - 1]) { last -= 1 }
            if start > 0 { out.append(0x0A) }
            out.append(contentsOf: bytes[first..<last])
            start = end + 1
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func locationText(_ record: DATEX2Record) -> String? {
        var parts = record.externalReferences.compactMap { reference -> String? in
            guard let code = reference.code else { return nil }
            return reference.system.map { "\($0) \(code)" } ?? code
        }
        if let alertC = record.alertC, !alertC.locations.isEmpty {
            var table = [alertC.countryCode, alertC.tableNumber].compactMap { $0 }.joined(separator: "/")
            if let version = alertC.tableVersion { table += " v\(version)" }
            parts.append("ALERT-C \(table): \(alertC.locations.joined(separator: " → "))")
        }
        return parts.isEmpty ? nil : parts.joined(separator: "; ")
    }

    // MARK: Geometry

    enum Shape {
        case point(Coordinate)
        case ends(Coordinate, Coordinate)
        case line([Coordinate])
    }

    static func geometry(_ locations: [DATEX2Record.Location]) throws(RecordProblem) -> Geometry? {
        var shapes: [Shape] = []
        for location in locations {
            if let shape = try shape(location) { shapes.append(shape) }
        }
        guard shapes.count > 1 else {
            switch shapes.first {
            case .point(let p)?: return .point(p)
            case let .ends(a, b)?: return a == b ? .point(a) : .multiPoint([a, b])
            case .line(let ps)?: return ps.count == 1 ? .point(ps[0]) : .lineString(ps)
            case nil: return nil
            }
        }
        var points: [Coordinate] = []
        var lines: [[Coordinate]] = []
        for shape in shapes {
            switch shape {
            case .point(let p): points.append(p)
            case let .ends(a, b): points += [a, b]; lines.append([a, b])
            case .line(let ps): if ps.count > 1 { lines.append(ps) } else { points += ps }
            }
        }
        let hasLine = shapes.contains { if case .line(let ps) = $0 { ps.count > 1 } else { false } }
        return hasLine ? .multiLineString(lines) : .multiPoint(points)
    }

    static func shape(_ location: DATEX2Record.Location) throws(RecordProblem) -> Shape? {
        for line in location.lines {
            if let positions = try positions(line) { return .line(positions) }
        }
        let from = try coordinate(location.from, "TPEG from")
        let to = try coordinate(location.to, "TPEG to")
        if let from, let to { return .ends(from, to) }
        let point = try coordinate(location.point, "pointByCoordinates")
        let tpeg = try coordinate(location.tpegPoint, "TPEG point")
        let display = try coordinate(location.display, "display coordinates")
        return (point ?? tpeg ?? display ?? from ?? to).map(Shape.point)
    }

    static func coordinate(_ text: DATEX2Record.CoordinateText, _ what: String) throws(RecordProblem) -> Coordinate? {
        try WireValues.coordinate(x: text.longitude, y: text.latitude, names: ("\(what) longitude", "\(what) latitude"))
    }

    /// The positions of a `gmlLineString`: `posList` is latitude, longitude (and a height when
    /// `srsDimension` is 3) for each position, in ETRS89 (`ETRS89-LatLonh` when no `srsName`
    /// is given, DATEX II 3 `GmlLineString`), which is WGS84 within a meter.
    static func positions(_ line: DATEX2Record.LineText) throws(RecordProblem) -> [Coordinate]? {
        guard let posList = line.posList else { return nil }
        if let srsName = line.srsName, !isLatitudeLongitude(srsName) {
            throw RecordProblem(text: "has a gmlLineString in srsName '\(srsName)', not latitude/longitude ETRS89 or WGS84")
        }
        let dimension = line.srsDimension.flatMap { Int($0) } ?? 2
        guard dimension == 2 || dimension == 3 else {
            throw RecordProblem(text: "has a gmlLineString with srsDimension '\(line.srsDimension ?? "")', not 2 or 3")
        }
        guard let numbers = DecimalList.numbers(in: posList) else {
            throw RecordProblem(text: "has a posList that is not a list of decimal numbers")
        }
        guard numbers.count % dimension == 0 else {
            throw RecordProblem(text: "has a posList of \(numbers.count) numbers, not pairs\(dimension == 3 ? " of three" : "")")
        }
        var positions: [Coordinate] = []
        positions.reserveCapacity(numbers.count / dimension)
        var i = 0
        while i < numbers.count {
            guard let position = Coordinate(latitude: numbers[i], longitude: numbers[i + 1]) else {
                throw RecordProblem(text: "has a posList position '\(numbers[i]) \(numbers[i + 1])' outside WGS84 latitude and longitude ranges")
            }
            positions.append(position)
            i += dimension
        }
        return positions.isEmpty ? nil : positions
    }

    /// EPSG 4326 (WGS84) and 4258 (ETRS89), both latitude first, however the name is
    /// written (`EPSG:4326`, `urn:ogc:def:crs:EPSG::4326`,
    /// `http://www.opengis.net/def/crs/EPSG/0/4258`), and DATEX II's `ETRS89-LatLonh`.
    static func isLatitudeLongitude(_ srsName: String) -> Bool {
        let name = srsName.lowercased()
        return name.hasSuffix(":4326") || name.hasSuffix("/4326") || name.hasSuffix(":4258") || name.hasSuffix("/4258")
            || name.hasPrefix("etrs89-latlon")
    }

    // MARK: Rejection

    static func excerptFields(_ record: DATEX2Record) -> [(String, String?)] {
        [("situation", record.situationID), ("id", record.recordID), ("version", record.recordVersion),
         ("xsi:type", record.recordType), ("situationRecordCreationTime", record.creationTime),
         ("situationRecordVersionTime", record.versionTime), ("overallStartTime", record.overallStartTime),
         ("overallEndTime", record.overallEndTime)]
    }
}
