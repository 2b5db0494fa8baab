import Foundation
import IncidentCore
@testable import IncidentFeeds
import TestSupport

/// What reading one response gave: its incidents, the records set aside, and the verdict.
struct ReadResult {
    var incidents: [Incident] = []
    var rejected: [RejectedRecord] = []
    var verdict = ResponseVerdict.complete
}

/// Reads `file` with `provider`: every record and the verdict.
func read(_ provider: any FeedProvider.Type, _ file: URL, source: String = "test", contentType: String? = nil) throws -> ReadResult {
    var result = ReadResult()
    result.verdict = try provider.read(file: file, contentType: contentType, source: source) { record in
        switch record {
        case .incident(let incident): result.incidents.append(incident)
        case .rejected(let rejected): result.rejected.append(rejected)
        }
    }
    return result
}

struct UnexpectedRejections: Error, CustomStringConvertible {
    var rejected: [RejectedRecord]
    var description: String { "records were set aside: \(rejected.map(\.reason))" }
}

/// Reads `file` with `provider` and returns every incident it yields; throws when a record was
/// set aside, so a test of good input never passes on fewer incidents.
func incidents(_ provider: any FeedProvider.Type, _ file: URL, source: String = "test") throws -> [Incident] {
    let result = try read(provider, file, source: source)
    guard result.rejected.isEmpty else { throw UnexpectedRejections(rejected: result.rejected) }
    return result.incidents
}

/// The `FeedError` reading `file` throws, and how many incidents reached the consumer first.
func feedError(_ provider: any FeedProvider.Type, _ file: URL) -> (error: FeedError?, delivered: Int) {
    var delivered = 0
    do {
        _ = try provider.read(file: file, contentType: "text/html", source: "test") { _ in delivered += 1 }
        return (nil, delivered)
    } catch let error as FeedError {
        return (error, delivered)
    } catch {
        return (nil, delivered)
    }
}

/// Writes `text` to a temporary file.
func temporaryFile(_ text: String, name: String = "body") throws -> URL {
    let url = try TestPaths.temporaryDirectory("feed").appendingPathComponent(name)
    try Data(text.utf8).write(to: url)
    return url
}

func instant(_ text: String) -> UTCInstant? { UTCInstant(rfc3339: text) }
