import Foundation
import IncidentCore
import IncidentFeeds
import TestSupport
import Testing

/// Thirty simulated days of polls of two sources, each response derived from a recorded one
/// (`../shared/feeds`): Gyeonggi GITS (`getIncidentInfo_20230321.xml`: its four records as
/// templates of 30 incidents, some with an `endDate`) every 4 hours, and WZDx (CDOT's feed of
/// 2023-05-22: 24 of its features, some with a verified `end_date`) every 6 hours. Incidents
/// come and go between polls; some responses are incomplete (GITS: fewer records than
/// `itemCount` declares; WZDx: a feature without an id), some fail (the body is cut off, as
/// when a page's transfer breaks: nothing of it is stored), and some WZDx answers are a stale
/// snapshot (a cache serves the document of an earlier poll, with its older `update_date`,
/// often one whose own fetch failed or was incomplete, after a newer complete one was applied).
///
/// ``expected(at:)`` says what was listed at a moment from these responses alone, by the
/// completeness rule (docs/providers.md), not through any store code.
struct MonthOfPolls {
    enum Ending: Equatable { case complete, incomplete, failed, staleCopy }

    struct Response {
        var source: String
        var fetchedAt: UTCInstant
        /// WZDx `feed_info.update_date`; nil for GITS, which states none.
        var publishedAt: UTCInstant?
        /// The ids the body lists (a failed body lists what it would have).
        var listed: [String]
        var ending: Ending
        var body: Data
    }

    static let start = UTCInstant(rfc3339: "2023-06-01T00:00:00Z")!
    static let end = start.adding(seconds: 30 * 86_400)

    var responses: [Response] = []
    /// The provider's end of each incident (`source/id`) that has one.
    var endedAt: [String: UTCInstant] = [:]

    init(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        let gits = try Self.gitsResponses(&random, endedAt: &endedAt)
        let wzdx = try Self.wzdxResponses(&random, endedAt: &endedAt)
        responses = (gits + wzdx).sorted { $0.fetchedAt < $1.fetchedAt }
    }

    // MARK: GITS

    /// 180 polls, 4 hours apart, of 30 incidents made from the recorded response's records.
    static func gitsResponses(_ random: inout SplitMix64, endedAt: inout [String: UTCInstant]) throws -> [Response] {
        let recorded = try String(contentsOf: TestPaths.sharedFeed("gg_gits/getIncidentInfo_20230321.xml"), encoding: .utf8)
        let templates = recorded.components(separatedBy: "<itemList>").dropFirst()
            .map { "<itemList>" + $0.components(separatedBy: "</itemList>")[0] + "</itemList>" }
        precondition(templates.count == 4, "the recorded GITS response has four records")
        func record(_ id: Int) -> String {
            var item = templates[id % templates.count]
            item = item.replacingOccurrences(of: #"<regSeq>[0-9]*</regSeq>"#, with: "<regSeq>\(gitsID(id))</regSeq>", options: .regularExpression)
            if id % 5 == 0 {
                let ended = start.adding(seconds: Int64(id) * 23 * 3600 + 1800)
                endedAt["gits/\(gitsID(id))"] = ended
                // Korea time, as GITS writes it.
                let korea = String(ended.adding(seconds: 9 * 3600).rfc3339.dropLast()).replacingOccurrences(of: "T", with: " ")
                item = item.replacingOccurrences(of: "<endDate></endDate>", with: "<endDate>\(korea)</endDate>")
            }
            return item
        }
        var present = Set<Int>()
        return (0..<180).map { index in
            for id in 0..<30 where random.next(in: 0...1) < 0.12 {
                if present.contains(id) { present.remove(id) } else { present.insert(id) }
            }
            let roll = random.next(in: 0...1)
            let ending: Ending = roll < 0.08 ? .failed : roll < 0.23 ? .incomplete : .complete
            var listed = present.sorted()
            if ending == .incomplete { listed = listed.filter { _ in Bool.random(using: &random) } }
            let declared = ending == .incomplete ? present.count + 1 : listed.count
            var body = "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?><ServiceResult><comMsgHeader/><msgHeader>"
                + "<headerCd>0</headerCd><headerMsg>정상적으로 처리되었습니다.</headerMsg><itemCount>\(declared)</itemCount></msgHeader><msgBody>"
                + listed.map(record).joined() + "</msgBody></ServiceResult>"
            if ending == .failed { body = String(body.prefix(body.count * 2 / 3)) }
            return Response(source: "gits", fetchedAt: start.adding(seconds: Int64(index) * 14_400), publishedAt: nil,
                            listed: listed.map(gitsID), ending: ending, body: Data(body.utf8))
        }
    }

    static func gitsID(_ id: Int) -> String { "2023\(600_000 + id)" }

    // MARK: WZDx

    /// 120 polls, 6 hours apart (50 minutes past the GITS polls), of 24 of the recorded feed's
    /// features; the feed says when it was updated, a minute before each fetch.
    static func wzdxResponses(_ random: inout SplitMix64, endedAt: inout [String: UTCInstant]) throws -> [Response] {
        let data = try Data(contentsOf: TestPaths.sharedFeed("wzdx/wzdx_v4_2_cdot_production_20230522_linestring.json"))
        let recorded = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let allFeatures = try #require(recorded["features"] as? [[String: Any]])
        let features: [[String: Any]] = try allFeatures.prefix(24).enumerated().map { index, feature in
            var feature = feature
            var properties = try #require(feature["properties"] as? [String: Any])
            properties["is_end_date_verified"] = index % 4 == 0
            if index % 4 == 0 {
                let ended = start.adding(seconds: Int64(index) * 29 * 3600 + 1234)
                properties["end_date"] = ended.rfc3339
                endedAt["wzdx/\(try #require(feature["id"] as? String))"] = ended
            }
            feature["properties"] = properties
            return feature
        }
        let ids = try features.map { try #require($0["id"] as? String) }
        func document(_ listed: [Int], updated: UTCInstant, withoutID: Bool) throws -> Data {
            var document = recorded
            var info = try #require(recorded["feed_info"] as? [String: Any])
            info["update_date"] = updated.rfc3339
            document["feed_info"] = info
            var chosen = listed.map { features[$0] }
            if withoutID, var nameless = features.first {
                nameless.removeValue(forKey: "id")
                chosen.append(nameless)
            }
            document["features"] = chosen
            return try JSONSerialization.data(withJSONObject: document)
        }
        var present = Set<Int>()
        var intended: [(listed: [Int], updated: UTCInstant)] = []
        var responses: [Response] = []
        for index in 0..<120 {
            for feature in 0..<features.count where random.next(in: 0...1) < 0.15 {
                if present.contains(feature) { present.remove(feature) } else { present.insert(feature) }
            }
            let fetchedAt = start.adding(seconds: Int64(index) * 21_600 + 3000)
            let updated = fetchedAt.adding(seconds: -60)
            intended.append((present.sorted(), updated))
            let roll = random.next(in: 0...1)
            let back = index - Int.random(in: 1...max(1, min(4, index)), using: &random)
            // Every 20th poll too, so that every month has at least six (the test's check of
            // non-vacuity asks for more than five; about one seed in a hundred had fewer).
            if roll < 0.12 || index % 20 == 10, index >= 2, responses[(back + 1)...].contains(where: { $0.ending == .complete }) {
                // A cache serves an earlier poll's document after a newer complete one was applied.
                let earlier = intended[back]
                responses.append(Response(source: "wzdx", fetchedAt: fetchedAt, publishedAt: earlier.updated, listed: earlier.listed.map { ids[$0] },
                                          ending: .staleCopy, body: try document(earlier.listed, updated: earlier.updated, withoutID: false)))
                continue
            }
            let ending: Ending = roll < 0.21 ? .failed : roll < 0.31 ? .incomplete : .complete
            var listed = present.sorted()
            if ending == .incomplete { listed = listed.filter { _ in Bool.random(using: &random) } }
            var body = try document(listed, updated: updated, withoutID: ending == .incomplete)
            if ending == .failed { body = body.prefix(body.count / 2) }
            responses.append(Response(source: "wzdx", fetchedAt: fetchedAt, publishedAt: updated, listed: listed.map { ids[$0] },
                                      ending: ending, body: body))
        }
        return responses
    }

    // MARK: Storing and the expected answer

    /// Polls every response in turn as `incident-scheduler` does (``IngestIncidents``): the
    /// body read by its provider into the store, a stale document read again as history, a
    /// failure recorded as a failed run.
    func store(in store: any IngestStore, directory: URL) throws {
        for (index, response) in responses.enumerated() {
            let file = directory.appendingPathComponent("response-\(index)")
            try response.body.write(to: file)
            let provider: any FeedProvider.Type = response.source == "gits" ? GITSProvider.self : WZDxProvider.self
            let poll = PollContext(source: response.source, startedAt: response.fetchedAt)
            do {
                _ = try store.ingestInTimeOrder(poll) { sink in
                    try provider.read(file: file, contentType: nil, source: response.source) { record in
                        switch record {
                        case .incident(let incident): try sink.upsert(incident.normalizedForStorage())
                        case .rejected(let rejected): try sink.reject(rejected.normalizedForStorage)
                        }
                    }
                }
            } catch {
                try store.recordRun(IngestRun(source: response.source, startedAt: poll.startedAt, finishedAt: poll.startedAt,
                                              status: .failed, observedAt: poll.observedAt, error: "\(error)"))
            }
        }
    }

    /// A stored response as the rule sees it: when it says the incidents were listed, and
    /// whether it may clear.
    struct Evidence {
        var source: String
        var at: UTCInstant
        var listed: Set<String>
        var clears: Bool
        var stale: Bool
    }

    /// The stored responses in the time they speak of: a document older than the newest one
    /// already applied for its source (stale) speaks of its publication time and clears
    /// nothing; an incomplete one clears nothing; a failed one is not stored.
    var evidence: [Evidence] {
        var newest: [String: UTCInstant] = [:]
        var evidence: [Evidence] = []
        for response in responses where response.ending != .failed {
            var at = response.fetchedAt
            var stale = false
            if let published = response.publishedAt {
                if let applied = newest[response.source], published < applied {
                    stale = true
                    at = min(at, published)
                } else {
                    newest[response.source] = published
                }
            }
            evidence.append(Evidence(source: response.source, at: at, listed: Set(response.listed.map { "\(response.source)/\($0)" }),
                                     clears: !stale && response.ending != .incomplete, stale: stale))
        }
        return evidence.sorted { $0.at < $1.at }
    }

    /// What each source had listed as active after each piece of evidence, in time order:
    /// listed since a response at or before then, and no complete response since left it out.
    var listings: [(at: UTCInstant, active: Set<String>)] {
        var active: [String: Set<String>] = [:]
        return evidence.map { piece in
            if piece.clears { active[piece.source] = piece.listed } else { active[piece.source, default: []].formUnion(piece.listed) }
            return (piece.at, active.values.reduce(into: Set<String>()) { $0.formUnion($1) })
        }
    }

    /// The incidents (`source/id`) listed as active at `instant`, short of their provider's end.
    static func expected(_ listings: [(at: UTCInstant, active: Set<String>)], endedAt: [String: UTCInstant], at instant: UTCInstant) -> Set<String> {
        guard let last = listings.lastIndex(where: { $0.at <= instant }) else { return [] }
        return listings[last].active.filter { id in endedAt[id].map { $0 > instant } ?? true }
    }
}
