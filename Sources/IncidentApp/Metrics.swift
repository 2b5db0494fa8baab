import Foundation
import IncidentCore

/// Prometheus text-format metrics for node_exporter's textfile collector
/// (<https://prometheus.io/docs/instrumenting/exposition_formats/>, naming per
/// <https://prometheus.io/docs/practices/naming/>: base units in the name, `_total` only on
/// counters, of which there are none here).
///
/// Only the sources of the configuration in force are exported, so the series of a removed
/// source disappear (and an alert on them clears). Every configured source has
/// `last_success_timestamp_seconds`, 0 when it never succeeded (the convention of
/// node_exporter's own `*_timestamp_seconds` gauges for "never"), so `time() - … > N` fires for
/// it too. Values come from the run log, except the duration of a poll, which is measured with a
/// monotonic clock by the process that polled and is exported for the polls of that process.
///
/// The file is written atomically (a temporary file in the same directory, renamed over the
/// target) and is world-readable (0644) whatever the umask, for the collector's user.
enum Metrics {
    /// The metrics text for `sources` (configuration order).
    /// - Parameters:
    ///   - summaries: the run log's summary per source (``IncidentReader/sourceSummaries()``).
    ///   - activeIncidents: active incidents per source (``IncidentReader/activeIncidentCounts(at:)``).
    ///   - durations: seconds the last poll of a source took, when this process polled it.
    static func render(sources: [String], summaries: [SourceSummary], activeIncidents: [String: Int],
                       durations: [String: Double]) -> String {
        let byName = Dictionary(summaries.map { ($0.source, $0) }, uniquingKeysWith: { first, _ in first })
        let configured = sources.map { byName[$0] ?? SourceSummary(source: $0) }
        let ran = configured.compactMap { summary in summary.lastRun.map { (summary.source, $0) } }
        var out = ""
        func family(_ name: String, _ help: String, _ samples: [(labels: String, value: String)]) {
            out += "# HELP \(name) \(help)\n# TYPE \(name) gauge\n"
            for sample in samples { out += "\(name){\(sample.labels)} \(sample.value)\n" }
        }
        func label(_ source: String) -> String { "source=\"\(escape(source))\"" }
        func unixTime(_ instant: UTCInstant?) -> String { String(instant?.secondsSince1970 ?? 0) }

        family("trafficincidents_build_info", "Always 1; the version label is the running build's.",
               [("version=\"\(escape(BuildInfo.version))\"", "1")])
        family("trafficincidents_last_success_timestamp_seconds",
               "Unix time the source's last poll that stored records finished; 0 if it never did.",
               configured.map { (label($0.source), unixTime($0.lastSuccessAt)) })
        family("trafficincidents_last_run_timestamp_seconds", "Unix time the source's last run finished, whatever its status.",
               ran.map { (label($0.0), unixTime($0.1.finishedAt)) })
        family("trafficincidents_last_run_duration_seconds", "Seconds the source's last poll by this process took.",
               sources.compactMap { source in durations[source].map { (label(source), String(describing: $0)) } })
        family("trafficincidents_last_run_success", "1 if the source's last run stored its records (complete or not), else 0.",
               ran.map { (label($0.0), $0.1.status.stored ? "1" : "0") })
        family("trafficincidents_last_run_complete", "1 if the source's last run stored a complete response (which may clear), else 0.",
               ran.map { (label($0.0), $0.1.status == .succeeded ? "1" : "0") })
        family("trafficincidents_last_run_status", "1 for the status of the source's last run, 0 for the others.",
               ran.flatMap { source, run in
                   RunStatus.allCases.map { ("\(label(source)),status=\"\($0.rawValue)\"", run.status == $0 ? "1" : "0") }
               })
        family("trafficincidents_last_run_records", "Records of the source's last run, by kind (rejected: set aside with a reason; duplicates: an id listed twice).",
               ran.flatMap { source, run -> [(labels: String, value: String)] in
                   let c = run.counts
                   return [("fetched", c.fetched), ("inserted", c.inserted), ("updated", c.updated), ("unchanged", c.unchanged),
                           ("reopened", c.reopened), ("cleared", c.cleared), ("rejected", c.rejected), ("duplicates", c.duplicates)]
                       .map { ("\(label(source)),kind=\"\($0.0)\"", String($0.1)) }
               })
        family("trafficincidents_consecutive_failures", "Failed or cancelled runs of the source since its last run that stored records.",
               configured.map { (label($0.source), String($0.consecutiveFailures)) })
        family("trafficincidents_stale_runs",
               "Runs of the source since its last current poll whose document was older than one already applied (stored as history only).",
               configured.map { (label($0.source), String($0.staleRuns)) })
        family("trafficincidents_quota_paused_until_timestamp_seconds",
               "Unix time until which the source's exhausted request quota pauses it; 0 if it was never paused.",
               configured.map { (label($0.source), unixTime($0.quotaExhaustedUntil)) })
        family("trafficincidents_active_incidents", "Incidents of the source active now: not cleared, started, not suspended, not ended by the provider.",
               sources.map { (label($0), String(activeIncidents[$0] ?? 0)) })
        return out
    }

    /// Label values escape `\`, `"` and newlines.
    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }

    /// Writes `text` to `path` atomically, mode 0644: a new temporary file beside it (unique:
    /// the loop's source tasks may write at the same moment), `fchmod` (the umask cannot make
    /// it private), then `rename(2)` over the target, so the collector never reads half a file.
    /// - Throws: ``FileAccessError`` naming the file and the system's reason.
    /// - Parameter what: the file, for the error (`the watch state file`).
    static func write(_ text: String, to path: String, what: String = "the metrics file") throws {
        let target = URL(fileURLWithPath: path)
        let temporary = target.deletingLastPathComponent().appendingPathComponent(".\(target.lastPathComponent).\(UUID().uuidString).tmp").path
        func failure(_ step: String, _ reason: String = String(cString: strerror(errno))) -> FileAccessError {
            FileAccessError("cannot write \(what) \(path) (\(step)): \(reason); check that its directory exists and this user may write there")
        }
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw failure("creating \(temporary)") }
        var problem: FileAccessError?
        if fchmod(descriptor, 0o644) != 0 { problem = failure("fchmod") }
        if problem == nil {
            do {
                try FileHandle(fileDescriptor: descriptor, closeOnDealloc: false).write(contentsOf: Data(text.utf8))
            } catch {
                problem = failure("write", (error as NSError).localizedDescription)
            }
        }
        if close(descriptor) != 0 && problem == nil { problem = failure("close") }
        if problem == nil && rename(temporary, path) != 0 { problem = failure("rename") }
        if let problem {
            unlink(temporary)
            throw problem
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
