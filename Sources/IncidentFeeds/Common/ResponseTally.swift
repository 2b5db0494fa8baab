import IncidentCore
import IncidentNetworking

/// What a reader learns about one response while reading it; ``verdict`` turns it into the
/// ``ResponseVerdict`` the store decides clearing by.
///
/// The completeness rule (docs/providers.md, "The incident lifecycle"): a response may clear only when its envelope
/// positively said success (the expected root element and a success code), every record in it
/// was read, and the number of records matches the number the response declares, if it
/// declares one. (Records whose id cannot be read make the poll incomplete too; the store
/// counts those.)
struct ResponseTally {
    /// The envelope positively said success: set by the reader when it saw the success code.
    var confirmedSuccess = false
    /// What stands in for the success code in messages, e.g. `headerCd 0` or `resultCode`.
    var successField: String
    /// The number of records the response declares and the field that declares it
    /// (`itemCount`, `totalCount`, `datacount`), when it does.
    var declared: (count: Int, field: String)?
    /// Records read, mapped or set aside.
    var recordsRead = 0
    /// Characters replaced while reading (illegal XML characters, HTML entities, raw control
    /// characters or invalid UTF-8 in JSON strings).
    var repairs = 0
    /// The envelope's own message (`resultMsg`, `headerMsg`), for errors.
    var envelopeMessage: String?
    /// For APIs whose answers declare their size: the field that does (`itemCount`,
    /// `totalCount`). An answer holding no record is then complete only when it declares a count
    /// or its code says "no data" (``codeSaysNoData``): a bare success code says nothing about
    /// which incidents are active.
    var emptyAnswerNeeds: String?
    /// The result code itself says there is no data (GITS `headerCd` 4, data.go.kr `03`).
    var codeSaysNoData = false
    /// Further reasons the response cannot be trusted to be complete.
    var incompleteBecause: [String] = []
    var warnings: [String] = []
    /// When the document says it was published (``ResponseVerdict/publishedAt``).
    var publishedAt: UTCInstant?

    init(successField: String) {
        self.successField = successField
    }

    /// Records a declared count given as text; text that is not a whole number is a reason
    /// for incompleteness (the response's own count cannot be checked).
    mutating func declare(_ text: String?, field: String) {
        guard let text else { return }
        if let count = Int(text.trimmingCharacters(in: .whitespaces)), count >= 0 {
            declared = (count, field)
        } else {
            incompleteBecause.append("the response's \(field) '\(String(text.prefix(40)))' is not a count, so it cannot be checked")
        }
    }

    var verdict: ResponseVerdict {
        var reasons: [String] = []
        if !confirmedSuccess {
            reasons.append("the response does not say it succeeded (no \(successField)), so it may not list every active incident")
        }
        if let field = emptyAnswerNeeds, recordsRead == 0, declared == nil, !codeSaysNoData {
            reasons.append("the response holds no record and declares no \(field), so it cannot say there are no incidents")
        }
        if let declared, declared.count != recordsRead {
            reasons.append("the response declares \(declared.field) \(declared.count) but holds \(recordsRead) record(s)")
        }
        var notes = warnings
        if repairs > 0 {
            notes.append("\(repairs) character(s) could not be read as sent (illegal in XML or JSON text, or an HTML entity) and were replaced")
        }
        return ResponseVerdict(incompleteBecause: reasons + incompleteBecause, warnings: notes, publishedAt: publishedAt)
    }
}

extension ResponseVerdict {
    /// The verdicts of the pages of one response, in order: incomplete when any page is; its
    /// publication time is the earliest page's.
    static func combining(_ pages: [ResponseVerdict]) -> ResponseVerdict {
        guard pages.count > 1 else { return pages.first ?? .complete }
        func numbered(_ lines: KeyPath<ResponseVerdict, [String]>) -> [String] {
            pages.enumerated().flatMap { index, page in page[keyPath: lines].map { "page \(index + 1): \($0)" } }
        }
        return ResponseVerdict(incompleteBecause: numbered(\.incompleteBecause), warnings: numbered(\.warnings),
                               publishedAt: pages.compactMap(\.publishedAt).min(), pages: pages.count)
    }
}

extension RejectedRecord {
    /// A record set aside, with an excerpt made of the fields it had as sent
    /// (`regSeq=202303216347; startDate=2023-13-45 99:00:00`): secrets redacted, each value
    /// on one line, cut to ``maxExcerptBytes`` bytes at a character boundary.
    init(externalID: String?, position: String, reason: String, fields: [(String, String?)]) {
        let text = fields.compactMap { name, value in value.map { "\(name)=\($0)" } }.joined(separator: "; ")
        self.init(externalID: externalID, position: position, reason: Redaction.redact(reason), excerpt: Self.excerpt(text))
    }

    /// `text` redacted, control characters shown as spaces, cut to ``maxExcerptBytes``.
    static func excerpt(_ text: String) -> String? {
        let redacted = Redaction.redact(text)
        var out = ""
        var bytes = 0
        for character in redacted {
            let shown: Character = character.unicodeScalars.contains { $0.properties.generalCategory == .control } ? " " : character
            let size = shown.utf8.count
            if bytes + size > maxExcerptBytes { break }
            out.append(shown)
            bytes += size
        }
        return out.isEmpty ? nil : out
    }
}
