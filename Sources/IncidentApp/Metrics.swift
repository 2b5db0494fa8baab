import Foundation
import IncidentCore

/// Prometheus text-format metrics for node_exporter's textfile collector
/// (<https://prometheus.io/docs/instrumenting/exposition_formats/>), written atomically: to a
/// temporary file in the same directory, then renamed over the target, so the collector never
/// reads half a file. Values come from `ingest_runs`, so the file always agrees with the database.
enum Metrics {
    static func render(_ all: [SourceSummary]) -> String {
        let summaries = all.compactMap { summary in summary.lastRun.map { (summary, $0) } }
        var out = ""
        func family(_ name: String, _ help: String, _ samples: [(String, String)]) {
            out += "# HELP \(name) \(help)\n# TYPE \(name) gauge\n"
            for (labels, value) in samples { out += "\(name){\(labels)} \(value)\n" }
        }
        func label(_ entry: (SourceSummary, IngestRun)) -> String { "source=\"\(escape(entry.0.source))\"" }
        family("trafficincidents_last_success_timestamp_seconds", "Unix time the source's last successful poll finished.",
               summaries.compactMap { s in s.0.lastSuccessAt.map { (label(s), String($0.secondsSince1970)) } })
        family("trafficincidents_last_run_timestamp_seconds", "Unix time the source's last run finished, whatever its status.",
               summaries.map { (label($0), String($0.1.finishedAt.secondsSince1970)) })
        family("trafficincidents_last_run_duration_seconds", "Duration of the source's last run.",
               summaries.map { (label($0), String($0.1.finishedAt.secondsSince1970 - $0.1.startedAt.secondsSince1970)) })
        family("trafficincidents_last_run_success", "1 if the source's last run stored its records (complete or not), else 0.",
               summaries.map { (label($0), $0.1.status.stored ? "1" : "0") })
        family("trafficincidents_last_run_complete", "1 if the source's last run stored a complete response (which may clear), else 0.",
               summaries.map { (label($0), $0.1.status == .succeeded ? "1" : "0") })
        family("trafficincidents_last_run_records", "Records of the source's last run, by kind.",
               summaries.flatMap { s -> [(String, String)] in
                   let c = s.1.counts
                   return [("fetched", c.fetched), ("inserted", c.inserted), ("updated", c.updated), ("unchanged", c.unchanged),
                           ("reopened", c.reopened), ("cleared", c.cleared), ("rejected", c.rejected), ("duplicates", c.duplicates)]
                       .map { ("\(label(s)),kind=\"\($0.0)\"", String($0.1)) }
               })
        family("trafficincidents_consecutive_failures", "Failed or cancelled runs of the source since its last success.",
               summaries.map { (label($0), String($0.0.consecutiveFailures)) })
        return out
    }

    /// Label values escape `\`, `"` and newlines.
    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }

    /// Writes the metrics of `store` to `path` atomically.
    static func write(_ store: any IncidentReader, to path: String) throws {
        let text = render(try store.sourceSummaries())
        let target = URL(fileURLWithPath: path)
        guard FileManager.default.isWritableFile(atPath: target.deletingLastPathComponent().path) else {
            throw FileAccessError("cannot write the metrics file \(path): its directory does not exist or is not writable")
        }
        // A unique name per write: the loop's source tasks may write at the same moment.
        let temporary = target.deletingLastPathComponent().appendingPathComponent(".\(target.lastPathComponent).\(UUID().uuidString).tmp")
        try Data(text.utf8).write(to: temporary)
        guard rename(temporary.path, target.path) == 0 else {
            let reason = String(cString: strerror(errno))
            try? FileManager.default.removeItem(at: temporary)
            throw FileAccessError("cannot write the metrics file \(path): \(reason)")
        }
    }
}

/// A file this program needs (the metrics file) cannot be created or written: names the file,
/// the reason, and what to check.
struct FileAccessError: Error, Equatable, Sendable, CustomStringConvertible {
    var message: String
    init(_ message: String) { self.message = message }
    var description: String { message }
}
