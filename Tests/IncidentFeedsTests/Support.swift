import Foundation
import IncidentCore
@testable import IncidentFeeds
import TestSupport

/// Reads `file` with `provider` and returns every incident it yields.
func incidents(_ provider: any FeedProvider.Type, _ file: URL, source: String = "test") throws -> [Incident] {
    var out: [Incident] = []
    _ = try provider.read(file: file, contentType: nil, source: source) { record in
        if case .incident(let incident) = record { out.append(incident) }
    }
    return out
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
