import Foundation
import IncidentCore
@testable import IncidentFeeds
import TestSupport
import Testing

/// Golden files of mapped feeds: every record of a recorded response, one block each, with
/// every field of the incident (the geometry as its type, number of positions, first position
/// and representative point) or the rejection. `UPDATE_GOLDEN=1` rewrites them; a rewritten
/// file is reviewed like code.
enum Golden {
    static func text(_ records: [FeedRecord]) -> String {
        records.map { record in
            switch record {
            case .incident(let i):
                var lines = ["\(i.externalID) | \(i.category.rawValue) | \(i.providerCategory ?? "-")"]
                func add(_ name: String, _ value: String?) { if let value { lines.append("  \(name): \(value.replacingOccurrences(of: "\n", with: "⏎"))") } }
                add("startedAt", i.startedAt?.rfc3339)
                add("confirmedAt", i.confirmedAt?.rfc3339)
                add("expectedEndAt", i.expectedEndAt?.rfc3339)
                add("endedAt", i.endedAt?.rfc3339)
                add("road", i.road)
                add("location", i.location)
                add("direction", i.direction)
                add("restriction", i.restriction)
                add("linkID", i.linkID)
                let positions = i.geometry?.positions ?? i.coordinate.map { [$0] } ?? []
                if let first = positions.first {
                    add("geometry", "\(i.geometry?.typeName ?? "Point") of \(positions.count), first \(first.longitude),\(first.latitude)")
                }
                if let c = i.coordinate { add("coordinate", "\(c.longitude),\(c.latitude)") }
                add("description", i.description)
                return lines.joined(separator: "\n")
            case .rejected(let r):
                return "REJECTED \(r.externalID ?? "-") at \(r.position): \(r.reason)\n  excerpt: \(r.excerpt ?? "-")"
            }
        }.joined(separator: "\n") + "\n"
    }

    /// Compares `records` with `Tests/Fixtures/golden/feeds/<name>.txt`.
    static func check(_ records: [FeedRecord], _ name: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let url = TestPaths.fixture("golden/feeds/\(name).txt")
        let actual = text(records)
        if ProcessInfo.processInfo.environment["UPDATE_GOLDEN"] == "1" {
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try actual.write(to: url, atomically: true, encoding: .utf8)
            return
        }
        let expected = try String(contentsOf: url, encoding: .utf8)
        #expect(actual == expected, "differs from Tests/Fixtures/golden/feeds/\(name).txt; run UPDATE_GOLDEN=1 swift test --filter <suite> and review the diff",
                sourceLocation: sourceLocation)
    }
}

/// Every record `provider` yields for `file`, and its verdict.
func records(_ provider: any FeedProvider.Type, _ file: URL, source: SourceDefinition? = nil) throws -> ([FeedRecord], ResponseVerdict) {
    var out: [FeedRecord] = []
    let definition = source ?? SourceDefinition(name: "test", provider: provider.name)
    let verdict = try provider.read(file: file, contentType: nil, definition: definition) { out.append($0) }
    return (out, verdict)
}

extension FeedRecord {
    var incident: Incident? {
        if case .incident(let incident) = self { return incident }
        return nil
    }

    var rejected: RejectedRecord? {
        if case .rejected(let rejected) = self { return rejected }
        return nil
    }
}

/// A coordinate from a literal (longitude, latitude), in tests.
func position(_ longitude: Double, _ latitude: Double) -> Coordinate {
    Coordinate(latitude: latitude, longitude: longitude)!
}
