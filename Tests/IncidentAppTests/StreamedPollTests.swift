import Foundation
import IncidentCore
import IncidentFeeds
import IncidentNetworking
import IncidentSQLite
import TestSupport
import Testing

/// A GITS poll over a real loopback server into a real SQLite store, its body read while it
/// downloads (issue 23): a download cut off after records were stored rolls the poll back, and
/// its retry reads the new response from its start in a new transaction.
@Suite("Polls read while they download", .serialized)
struct StreamedPollTests {
    static let now = UTCInstant(rfc3339: "2024-01-01T00:00:00Z")!

    /// The store, counting the records each `ingest` call (each transaction) was given.
    final class CountingStore: IngestStore, @unchecked Sendable {  // `passes` is read after the poll
        let inner: SQLiteStore
        var passes: [Int] = []

        init(_ inner: SQLiteStore) { self.inner = inner }

        struct Sink: PollSink {
            let inner: any PollSink
            let count: () -> Void
            func upsert(_ incident: Incident) throws { count(); try inner.upsert(incident) }
            func reject(_ record: RejectedRecord) throws { count(); try inner.reject(record) }
        }

        func ingest(_ poll: PollContext, _ produce: (any PollSink) throws -> ResponseVerdict) throws -> IngestRun {
            var count = 0
            defer { passes.append(count) }
            return try inner.ingest(poll) { sink in try produce(Sink(inner: sink) { count += 1 }) }
        }

        func recordRun(_ run: IngestRun) throws { try inner.recordRun(run) }
        func quotaResumesAt(source: String) throws -> UTCInstant? { try inner.quotaResumesAt(source: source) }
    }

    /// A GITS document of `count` records `S1`…`S<count>`, about 200 bytes each.
    static func feed(_ count: Int) -> String {
        let records = (1...count).map { index in
            "<itemList><linkId>L\(index)</linkId><regSeq>S\(index)</regSeq><startDate>2023-12-31 14:13:00</startDate>"
                + "<inciDesc>[사고] 추돌 \(index)</inciDesc><inciPlace1>경부고속도로</inciPlace1><coord_x>127.0</coord_x><coord_y>37.0</coord_y></itemList>\n"
        }.joined()
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <ServiceResult><msgHeader><headerCd>0</headerCd><headerMsg>ok</headerMsg><itemCount>\(count)</itemCount></msgHeader>
            <msgBody>\(records)</msgBody></ServiceResult>
            """
    }

    func poll(_ server: LoopbackServer, _ store: CountingStore, maxRetries: Int) async throws -> IngestRun {
        var configuration = NetworkConfiguration(retryPolicy: RetryPolicy(maxRetries: maxRetries, baseDelay: 0.05, factor: 2, maxDelay: 0.1),
                                                 temporaryDirectory: try TestPaths.temporaryDirectory("streamed-poll"))
        configuration.streamingStart = .immediately
        let source = SourceDefinition(name: "gits", provider: "gits", key: APIKey("streamed-key"), baseURL: server.url("/api/rest/"))
        let feed = try ProviderRegistry.feed(for: source, client: URLSessionHTTPClient(configuration: configuration))
        // On a store's threads, as the scheduler polls: the reading blocks while bytes arrive.
        return await StoreExecutor(name: "streamed-poll", threads: 2).runAsync {
            await IngestIncidents(store: store, clock: .fixed(Self.now), describe: { String(describing: $0) })(feed)
        }
    }

    func storedIDs(_ store: SQLiteStore) throws -> [String] {
        var ids: [String] = []
        try store.forEachIncident(matching: IncidentQuery(now: Self.now)) { ids.append($0.incident.externalID) }
        return ids
    }

    /// 3,000 records arrive in 256 KiB pieces 0.5 s apart, cut after 400,000 bytes: about 1,900
    /// records were read and their first batches stored before the cut.
    @Test("a body cut off after records were stored: that transaction is rolled back and the retry stores every record once")
    func cutThenRetried() async throws {
        let text = Self.feed(3000)
        let server = try await LoopbackServer.start(routes: ["/api/rest/getIncidentInfo": [
            ResponseSpec(headers: ["Content-Type": "text/xml"], body: text, chunkSize: 262_144, chunkDelay: 0.5, truncateAfter: 400_000),
            ResponseSpec(headers: ["Content-Type": "text/xml"], body: text),
        ]])
        defer { server.stop() }
        let store = CountingStore(try SQLiteStore(path: ":memory:", clock: .fixed(Self.now)))
        let run = try await poll(server, store, maxRetries: 1)
        #expect(run.status == .succeeded, "\(String(describing: run.error))")
        #expect(run.counts.fetched == 3000 && run.counts.inserted == 3000, "\(run.counts)")
        #expect(store.passes.count == 2)
        #expect((store.passes.first ?? 0) > 0 && (store.passes.first ?? 0) < 3000, "the cut transaction had stored \(store.passes)")
        #expect(store.passes.last == 3000)
        let ids = try storedIDs(store.inner)
        #expect(ids.count == 3000)
        #expect(Set(ids) == Set((1...3000).map { "S\($0)" }))
        #expect(try await server.requests(path: "/api/rest/getIncidentInfo").count == 2)
    }

    @Test("a body cut off after records were stored, no retry left: the run failed, typed, and the store holds nothing of it")
    func cutWithoutRetry() async throws {
        let text = Self.feed(3000)
        let server = try await LoopbackServer.start(routes: ["/api/rest/getIncidentInfo": [
            ResponseSpec(headers: ["Content-Type": "text/xml"], body: text, chunkSize: 262_144, chunkDelay: 0.5, truncateAfter: 400_000),
        ]])
        defer { server.stop() }
        let store = CountingStore(try SQLiteStore(path: ":memory:", clock: .fixed(Self.now)))
        let run = try await poll(server, store, maxRetries: 0)
        #expect(run.status == .failed)
        #expect(run.error?.hasPrefix("gits: the response body was cut short (received ") == true, "\(String(describing: run.error))")
        #expect(store.passes.count == 1 && (store.passes.first ?? 0) > 0, "\(store.passes)")
        #expect(try storedIDs(store.inner).isEmpty)
    }

    @Test("an error envelope read while the body downloads stops the download and stores nothing; not retried")
    func envelopeWhileDownloading() async throws {
        let envelope = "<ServiceResult><msgHeader><headerCd>99</headerCd><headerMsg>SERVICE ERROR</headerMsg></msgHeader><msgBody>"
            + String(repeating: "<itemList><regSeq>E</regSeq></itemList>\n", count: 4000) + "</msgBody></ServiceResult>"
        let server = try await LoopbackServer.start(routes: ["/api/rest/getIncidentInfo": [
            ResponseSpec(headers: ["Content-Type": "text/xml"], body: envelope, chunkSize: 16_384, chunkDelay: 1),
        ]])
        defer { server.stop() }
        let store = CountingStore(try SQLiteStore(path: ":memory:", clock: .fixed(Self.now)))
        let started = ContinuousClock.now
        let run = try await poll(server, store, maxRetries: 2)
        #expect(run.status == .failed)
        #expect(run.error?.contains("SERVICE ERROR") == true, "\(String(describing: run.error))")
        // The whole body (164 KB in 16 KiB pieces a second apart) would take 9 s to send.
        #expect(ContinuousClock.now - started < .seconds(5))
        #expect(try storedIDs(store.inner).isEmpty)
        #expect(try await server.requests(path: "/api/rest/getIncidentInfo").count == 1)
    }
}
