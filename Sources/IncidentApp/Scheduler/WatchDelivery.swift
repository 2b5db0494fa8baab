import CCrypto
import Foundation
import IncidentCore
import IncidentNetworking
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Delivers the change feed to the configuration's watches (README, "Watches"), from each
/// watch's cursor: every transition after it, in cursor order, that the watch wants is POSTed
/// to its webhook as the JSON of `incidents changes` (``ChangesCommand/json(_:)``), signed with
/// `X-Incidents-Signature: sha256=HEX` (HMAC-SHA256 of the body under the watch's secret). The
/// cursor advances (and is written to the state file, atomically) only after a 2xx, so a
/// restart neither repeats nor loses a delivery; a repeat can only follow a crash between the
/// 2xx and the write, and carries the same `X-Incidents-Cursor` for the receiver to drop it. A
/// failed POST is retried with the watch's backoff; when its retries run out the watch stops
/// for this turn at that transition and the next turn starts there again.
struct WatchDelivery: Sendable {
    let watches: [WatchDefinition]
    let statePath: String
    let store: Stores.Writable
    let logger: Logger

    /// Transitions read per query.
    static let page = 200

    /// One turn: every watch, up to the last committed transition.
    func deliver() async {
        guard !watches.isEmpty else { return }
        guard let feed = store as? any ChangeFeedReader else {
            logger.log(.error, "watch.failed", ["error": "this store has no change feed"])
            return
        }
        var entries: [String: WatchState.Entry]
        do {
            entries = try WatchState.read(statePath)
        } catch {
            logger.log(.error, "watch.failed", ["error": ErrorText.describe(error)])
            return
        }
        for watch in watches where !Task.isCancelled {
            var cursor = entries[watch.name]?.cursor ?? 0
            do {
                while !Task.isCancelled {
                    let after = cursor
                    let changes = try await store.perform { try feed.changes(after: after, limit: Self.page) }
                    guard !changes.isEmpty else { break }
                    let matching = try await store.perform { try matches(watch, changes) }
                    for change in changes {
                        if matching.contains(change.transition.cursor) {
                            if let failure = await post(change, to: watch) {
                                // Stopped by SIGTERM: not the receiver's failure.
                                if Task.isCancelled { throw WatchStop() }
                                entries[watch.name, default: .init(cursor: cursor)].lastError = failure
                                entries[watch.name]?.lastErrorAt = UTCInstant(secondsSince1970: Int64(Date().timeIntervalSince1970)).rfc3339
                                try WatchState.write(entries, to: statePath)
                                throw WatchStop()
                            }
                        }
                        cursor = change.transition.cursor
                        // After each delivery; a run of transitions the watch does not want is recorded once.
                        if matching.contains(cursor) || change.transition.cursor == changes.last?.transition.cursor {
                            entries[watch.name, default: .init()].cursor = cursor
                            try WatchState.write(entries, to: statePath)
                        }
                    }
                    if changes.count < Self.page { break }
                }
            } catch is WatchStop {
                continue
            } catch {
                logger.log(.error, "watch.failed", ["watch": watch.name, "cursor": cursor, "error": ErrorText.describe(error)])
            }
        }
    }

    /// Until cancelled: a turn, then another every `interval` seconds (`run --loop`).
    func deliverForever(every interval: Double) async {
        while !Task.isCancelled {
            await deliver()
            try? await Task.sleep(nanoseconds: UInt64(interval * 1e9))
        }
    }

    /// The cursors of the `changes` the watch wants: of its kinds, of an incident its filters
    /// match now (by the store's own query, as `incidents list` would list it).
    func matches(_ watch: WatchDefinition, _ changes: [IncidentChange]) throws -> Set<Int64> {
        let wanted = changes.filter { watch.kinds.contains($0.transition.kind) }
        let ids = wanted.compactMap(\.transition.incidentID)
        var listed = Set<Int64>()
        if let low = ids.min(), let high = ids.max() {
            var query = watch.query
            query.order = .id
            query.afterID = low - 1
            query.beforeID = high + 1
            try QueryIncidents(reader: store).forEach(query) { listed.insert($0.id) }
        }
        return Set(wanted.filter { change in
            guard let id = change.transition.incidentID else {
                return !watch.filtersIncident && (watch.query.sources.isEmpty || watch.query.sources.contains(change.transition.source))
            }
            return listed.contains(id)
        }.map(\.transition.cursor))
    }

    /// POSTs one change, retrying by the watch's policy: nil after a 2xx, else the last failure.
    func post(_ change: IncidentChange, to watch: WatchDefinition) async -> String? {
        let body = Data(ChangesCommand.json(change).utf8)
        var request = URLRequest(url: watch.url, timeoutInterval: watch.timeoutSeconds)
        request.httpMethod = "POST"
        request.httpBody = body
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue("sha256=" + Self.hmacSHA256(key: watch.secret, body), forHTTPHeaderField: "X-Incidents-Signature")
        request.setValue(String(change.transition.cursor), forHTTPHeaderField: "X-Incidents-Cursor")
        request.setValue(watch.name, forHTTPHeaderField: "X-Incidents-Watch")
        let (name, cursor, kind) = (watch.name, change.transition.cursor, change.transition.kind.rawValue)
        // The whole exchange within the watch's timeout (a request's timeoutInterval alone is an idle timeout).
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = watch.timeoutSeconds
        configuration.timeoutIntervalForResource = watch.timeoutSeconds
        let session = URLSession(configuration: configuration)
        defer { session.finishTasksAndInvalidate() }
        var retry = 0
        while !Task.isCancelled {
            var failure: String
            do {
                let (_, response) = try await session.data(for: request)
                let status = (response as? HTTPURLResponse)?.statusCode ?? 0
                if (200..<300).contains(status) {
                    logger.log(.info, "watch.delivered", ["watch": name, "cursor": cursor, "kind": kind, "status": status, "attempt": retry + 1])
                    return nil
                }
                failure = "HTTP \(status)"
            } catch {
                failure = Redaction.redact((error as NSError).localizedDescription)
            }
            guard retry < watch.retryPolicy.maxRetries else {
                logger.log(.error, "watch.delivery_failed", [
                    "watch": name, "cursor": cursor, "kind": kind, "attempt": retry + 1, "error": failure,
                    "detail": "retries exhausted; the next turn starts again at this transition",
                ])
                return failure
            }
            let delay = watch.retryPolicy.delay(forRetry: retry, retryAfter: nil, unitRandom: Double.random(in: 0...1))
            logger.log(.warning, "watch.delivery_retry", [
                "watch": name, "cursor": cursor, "kind": kind, "attempt": retry + 1, "error": failure, "retry_in_s": delay,
            ])
            retry += 1
            try? await Task.sleep(nanoseconds: UInt64(delay * 1e9))
        }
        return "cancelled"
    }

    /// HMAC-SHA256 (RFC 2104, FIPS 180-4) of `data` under the UTF-8 bytes of `key`, as lowercase
    /// hex (64 characters), by OpenSSL's libcrypto.
    static func hmacSHA256(key: String, _ data: Data) -> String {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let keyBytes = Array(key.utf8)
        data.withUnsafeBytes { bytes in
            _ = HMAC(EVP_sha256(), keyBytes, Int32(keyBytes.count), bytes.bindMemory(to: UInt8.self).baseAddress, bytes.count, &digest, &length)
        }
        return digest.prefix(Int(length)).map { String(format: "%02x", $0) }.joined()
    }

    /// A watch stopped for this turn (its delivery failed and was logged).
    private struct WatchStop: Error {}
}

/// The state file of the watches: a JSON object of each watch's position by name: its last
/// delivered (or passed) cursor and its last error, written atomically.
enum WatchState {
    struct Entry: Codable, Equatable, Sendable {
        var cursor: Int64 = 0
        /// The last failure (`HTTP 503`, a timeout), with when it happened (RFC 3339); kept
        /// after later successes, so `incident-scheduler watches` shows when it was.
        var lastError: String?
        var lastErrorAt: String?
    }

    /// The positions; empty when the file does not exist yet.
    /// - Throws: ``ConfigurationError`` when it cannot be read or is not such an object.
    static func read(_ path: String) throws -> [String: Entry] {
        switch FileText.read(path, limit: 1 << 20) {
        case .missing: return [:]
        case .text(let text):
            guard let entries = try? JSONDecoder().decode([String: Entry].self, from: Data(text.utf8)) else {
                throw ConfigurationError("the watch state file \(path) is not a JSON object of watch positions; move it away to deliver from the start")
            }
            return entries
        case .unreadable(let reason), .notText(let reason):
            throw ConfigurationError("cannot read the watch state file \(path): \(reason)")
        }
    }

    static func write(_ entries: [String: Entry], to path: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        try Metrics.write(String(decoding: try encoder.encode(entries), as: UTF8.self) + "\n", to: path, what: "the watch state file")
    }
}
