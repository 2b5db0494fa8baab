import IncidentCore

/// What is wrong with one value of a record; the provider's mapper adds which record.
struct RecordProblem: Error {
    var text: String
}

/// Readers of the value formats the providers share.
enum WireValues {
    /// A WGS84 position from the provider's longitude (`x`) and latitude (`y`) text.
    /// Both absent, or both exactly 0 (the Korean feeds' "no position"), is nil.
    static func coordinate(x: String?, y: String?, names: (x: String, y: String)) throws(RecordProblem) -> Coordinate? {
        switch (x, y) {
        case (nil, nil):
            return nil
        case let (x?, y?):
            guard let longitude = Double(x), let latitude = Double(y) else {
                throw RecordProblem(text: "has coordinates \(names.x)='\(x)' \(names.y)='\(y)' that are not decimal numbers")
            }
            if longitude == 0 && latitude == 0 { return nil }
            guard let coordinate = Coordinate(latitude: latitude, longitude: longitude) else {
                throw RecordProblem(text: "has coordinates \(names.x)=\(x) \(names.y)=\(y) outside WGS84 ranges")
            }
            return coordinate
        default:
            throw RecordProblem(text: "has only one of \(names.x) and \(names.y)")
        }
    }

    /// A Korea-time wall-clock value in `layout`, as UTC; nil when absent.
    static func koreaTime(_ text: String?, layout: LocalTimeLayout, field: String) throws(RecordProblem) -> UTCInstant? {
        guard let text else { return nil }
        guard let instant = UTCInstant(local: text, layout: layout, utcOffsetSeconds: UTCInstant.koreaUTCOffsetSeconds) else {
            let pattern = layout.pattern
            throw RecordProblem(text: "has \(field) '\(text)', not \(pattern) (Korea time)")
        }
        return instant
    }
}
