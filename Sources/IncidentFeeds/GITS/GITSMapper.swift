import IncidentCore

/// Maps a GITS ``AccidentDTO`` to an `Incident`, or sets the record aside. Provider quirks end here.
///
/// - `regSeq` → external id (required).
/// - The bracketed kind at the start of `inciDesc` (`[차량고장]`) → category via
///   ``CategoryClassifier``; the bracket's text is kept as `providerCategory`. No bracket → `other`.
/// - `inciPlace1` → road (and its canonical name, ``KoreanRoads``), `inciPlace2` → location, `restrictType` → restriction, `linkId` → link id.
/// - `coord_y`/`coord_x` → WGS84 latitude/longitude; both absent (or both 0, GITS's "unknown") → none.
/// - Dates in Korea time (UTC+9; `yyyy-MM-dd HH:mm:ss` and the variants ``UTCInstant/init(local:layout:utcOffsetSeconds:)``
///   reads) → UTC.
///
/// A record that cannot be read faithfully (no `regSeq`, a field repeated, a date or coordinate
/// that does not parse) is set aside with its reason rather than stored altered; the rest of the
/// response is stored, and the incident with its id is not cleared by this poll.
public enum GITSMapper {
    public static func record(from dto: AccidentDTO, source: String) -> FeedRecord {
        guard dto.problems.isEmpty else { return rejected(dto, dto.problems.joined(separator: "; ")) }
        guard let id = dto.regSeq else { return rejected(dto, "has no regSeq") }
        let label = bracketedKind(dto.inciDesc)
        do throws(RecordProblem) {
            return .incident(Incident(
                source: source, externalID: id,
                category: CategoryClassifier.category(of: label) ?? .other,
                providerCategory: label, description: dto.inciDesc, road: dto.inciPlace1,
                roadRef: KoreanRoads.canonical(name: dto.inciPlace1), location: dto.inciPlace2,
                restriction: dto.restrictType,
                coordinate: try WireValues.coordinate(x: dto.coord_x, y: dto.coord_y, names: ("coord_x", "coord_y")),
                linkID: dto.linkId,
                startedAt: try WireValues.koreaTime(dto.startDate, layout: .dashed, field: "startDate"),
                confirmedAt: try WireValues.koreaTime(dto.confirmDate, layout: .dashed, field: "confirmDate"),
                expectedEndAt: try WireValues.koreaTime(dto.estEndDate, layout: .dashed, field: "estEndDate"),
                endedAt: try WireValues.koreaTime(dto.endDate, layout: .dashed, field: "endDate")))
        } catch {
            return rejected(dto, error.text)
        }
    }

    /// `차량고장` from `[차량고장] 강변북로 …`; nil without a leading bracket.
    ///
    /// Searched in the UTF-8 view: `[` and `]` are ASCII, and walking Characters would run
    /// grapheme breaking over the Korean text of every record.
    static func bracketedKind(_ description: String?) -> String? {
        guard let utf8 = description?.utf8, utf8.first == UInt8(ascii: "["),
              let close = utf8.firstIndex(of: UInt8(ascii: "]")) else { return nil }
        return Substring(utf8[utf8.index(after: utf8.startIndex)..<close]).description.nonEmptyTrimmed
    }

    static func rejected(_ dto: AccidentDTO, _ problem: String) -> FeedRecord {
        // A repeated regSeq reads nil: the id is unknown, whatever the record says.
        .rejected(RejectedRecord(externalID: dto.regSeq, position: "itemList at line \(dto.line)",
                                 reason: "the record \(problem)", fields: dto.fields))
    }
}
