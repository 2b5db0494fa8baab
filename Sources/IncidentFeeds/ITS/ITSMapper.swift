import IncidentCore

/// Maps an ITS ``EventInfoDTO`` to an `Incident`.
///
/// - External id (the feed has none): `linkId:startDate:eventDetailType`, e.g.
///   `1870199600:20221220093317:작업`: the link, the minute-exact start and the kind identify
///   an event and do not change while it lasts (its message, lanes and end do). Without a
///   `linkId`, the coordinates stand in: `127.4226,36.4137:20221220093317:작업`.
/// - Category from `eventDetailType`, then `eventType` (``CategoryClassifier``); the provider's
///   text is kept as `eventType/eventDetailType` (or one of them when equal).
/// - Road `roadName` (else `roadNo`), direction `roadDrcType`, restriction `lanesBlocked`
///   (else `lanesBlockType`), description `message`, WGS84 `coordY`/`coordX`.
/// - `startDate`/`endDate` `yyyyMMddHHmmss` Korea time → UTC.
public enum ITSMapper {
    public static func incident(from dto: EventInfoDTO, source: String) throws -> Incident {
        do throws(RecordProblem) {
            guard let start = dto.startDate else { throw RecordProblem(text: "has no startDate") }
            let coordinate = try WireValues.coordinate(x: dto.coordX, y: dto.coordY, names: ("coordX", "coordY"))
            guard let place = dto.linkId ?? coordinate.map({ "\(ITSRouter.degrees($0.longitude)),\(ITSRouter.degrees($0.latitude))" }) else {
                throw RecordProblem(text: "has neither linkId nor coordinates to identify it")
            }
            let kind = dto.eventDetailType ?? dto.eventType ?? "-"
            let label: String? = switch (dto.eventType, dto.eventDetailType) {
            case let (type?, detail?) where type != detail: "\(type)/\(detail)"
            case let (type, detail): type ?? detail
            }
            return Incident(
                source: source, externalID: "\(place):\(start):\(kind)",
                category: CategoryClassifier.category(of: dto.eventDetailType) ?? CategoryClassifier.category(of: dto.eventType) ?? .other,
                providerCategory: label, description: dto.message, road: dto.roadName ?? dto.roadNo,
                direction: dto.roadDrcType, restriction: dto.lanesBlocked ?? dto.lanesBlockType,
                coordinate: coordinate, linkID: dto.linkId,
                startedAt: try WireValues.koreaTime(start, layout: .compact, field: "startDate"),
                endedAt: try WireValues.koreaTime(dto.endDate, layout: .compact, field: "endDate"))
        } catch {
            throw invalid(dto, error.text)
        }
    }

    static func invalid(_ dto: EventInfoDTO, _ problem: String) -> FeedError {
        FeedError(.invalidRecord, provider: ITSProvider.name,
                  message: "the eventInfo record at position \(dto.position) \(problem); nothing was stored")
    }
}
