import IncidentCore

/// Maps an ITS ``EventInfoDTO`` to an `Incident`, or sets the record aside.
///
/// - External id (the feed has none): `linkId:startDate:eventDetailType`, e.g.
///   `1870199600:20221220093317:작업`: the link, the start and the kind identify an event and do
///   not change while it lasts (its message, lanes and end do). Without a `linkId`, the
///   coordinates stand in: `127.4226,36.4137:20221220093317:작업`. A start sent in another
///   layout than `yyyyMMddHHmmss` is written in that layout in the id.
/// - Category from `eventDetailType`, then `eventType` (``CategoryClassifier``); the provider's
///   text is kept as `eventType/eventDetailType` (or one of them when equal).
/// - Road `roadName` (else `roadNo`), its canonical name from `type` and `roadNo` or the name
///   (``KoreanRoads``: `경부선` on a 고속도로 with roadNo 1 is `고속국도1호선`), direction `roadDrcType`, restriction `lanesBlocked`
///   (else `lanesBlockType`), description `message`, WGS84 `coordY`/`coordX`.
/// - City-road events pack their place into `message` as `종류::도로::시작::끝::차로::[태그] 본문`
///   while `roadName` and the lane fields stay empty (second-hand measurement: 108 of 122 Seoul
///   events, DESIGN.md): road, location (`시작 → 끝`) and restriction are read from it where the
///   fields are empty; the whole message stays the description.
/// - `startDate`/`endDate` Korea time → UTC.
public enum ITSMapper {
    public static func record(from dto: EventInfoDTO, source: String) -> FeedRecord {
        guard dto.problems.isEmpty else {
            // A record over the per-record limit was read for its short values, which the id's
            // parts are: it keeps its id, so its incident is not cleared and the poll stays
            // complete. Other problems (a field given twice) may hide a part: no id.
            return rejected(dto, id: dto.isOversized ? oversizedID(dto) : nil, dto.problems.joined(separator: "; "))
        }
        // The id, once its parts are read: a record set aside for a later field (a coordinate)
        // keeps it, so that its stored incident is not cleared and the poll stays complete.
        var knownID: String?
        do throws(RecordProblem) {
            guard let startText = dto.startDate else { throw RecordProblem(text: "has no startDate") }
            let start = try WireValues.koreaTime(startText, layout: .compact, field: "startDate")
            let kind = dto.eventDetailType ?? dto.eventType ?? "-"
            knownID = dto.linkId.map { "\($0):\(idStart(startText, start)):\(kind)" }
            let coordinate = try WireValues.coordinate(x: dto.coordX, y: dto.coordY, names: ("coordX", "coordY"))
            guard let place = dto.linkId ?? coordinate.map({ "\(ITSRouter.degrees($0.longitude)),\(ITSRouter.degrees($0.latitude))" }) else {
                throw RecordProblem(text: "has neither linkId nor coordinates to identify it")
            }
            let label: String? = switch (dto.eventType, dto.eventDetailType) {
            case let (type?, detail?) where type != detail: "\(type)/\(detail)"
            case let (type, detail): type ?? detail
            }
            let packed = PackedMessage(dto.message)
            return .incident(Incident(
                source: source, externalID: "\(place):\(idStart(startText, start)):\(kind)",
                category: CategoryClassifier.category(of: dto.eventDetailType) ?? CategoryClassifier.category(of: dto.eventType)
                    ?? CategoryClassifier.category(of: packed?.kind) ?? .other,
                providerCategory: label ?? packed?.kind, description: dto.message, road: dto.roadName ?? packed?.road ?? dto.roadNo,
                roadRef: KoreanRoads.canonical(name: dto.roadName ?? packed?.road, roadClass: dto.type, number: dto.roadNo),
                location: packed?.section,
                direction: dto.roadDrcType, restriction: dto.lanesBlocked ?? dto.lanesBlockType ?? packed?.lanes,
                coordinate: coordinate, linkID: dto.linkId, startedAt: start,
                endedAt: try WireValues.koreaTime(dto.endDate, layout: .compact, field: "endDate")))
        } catch {
            return rejected(dto, id: knownID, error.text)
        }
    }

    /// The id of an oversized record, when its `linkId` and `startDate` were read.
    static func oversizedID(_ dto: EventInfoDTO) -> String? {
        guard let link = dto.linkId, let startText = dto.startDate else { return nil }
        let start = try? WireValues.koreaTime(startText, layout: .compact, field: "startDate")
        return "\(link):\(idStart(startText, start ?? nil)):\(dto.eventDetailType ?? dto.eventType ?? "-")"
    }

    /// The start as the id writes it: as sent when it is `yyyyMMddHHmmss`, else that layout in
    /// Korea time, so that a provider switching layouts keeps its ids.
    static func idStart(_ text: String, _ instant: UTCInstant?) -> String {
        if text.utf8.count == 14, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) { return text }
        guard let instant else { return text }
        let local = instant.adding(seconds: Int64(UTCInstant.koreaUTCOffsetSeconds)).rfc3339  // yyyy-MM-ddTHH:mm:ssZ
        return local.filter(\.isNumber).prefix(14).description
    }

    /// The parts of a city-road message `종류::도로::시작::끝::차로::[태그] 본문`.
    struct PackedMessage {
        var kind: String?
        var road: String?
        var section: String?
        var lanes: String?

        init?(_ message: String?) {
            guard let message, message.contains("::") else { return nil }
            let parts = message.components(separatedBy: "::").map(\.nonEmptyTrimmed)
            guard parts.count >= 6 else { return nil }
            kind = parts[0]
            road = parts[1]
            section = switch (parts[2], parts[3]) {
            case let (from?, to?): "\(from) → \(to)"
            case let (from, to): from ?? to
            }
            lanes = parts[4]
        }
    }

    /// An ITS record has no id of its own: a record that cannot be mapped cannot be named.
    static func rejected(_ dto: EventInfoDTO, id: String?, _ problem: String) -> FeedRecord {
        .rejected(RejectedRecord(externalID: id, position: dto.position, reason: "the record \(problem)", fields: dto.fields))
    }
}
