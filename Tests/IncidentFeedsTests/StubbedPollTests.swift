import Foundation
import IncidentCore
@testable import IncidentFeeds
import IncidentNetworking
import Testing

/// The feeds polled through `StubHTTPClient` (the routers' sample responses, no sockets),
/// and the `IngestIncidents` use case over them with an in-memory store double.
@Suite("Polling through the stub client")
struct StubbedPollTests {
    /// A store double that keeps what it is given, to test the use case alone.
    final class RecordingStore: IngestStore, @unchecked Sendable {
        var stored: [Incident] = []
        var runs: [IngestRun] = []
        var resumesAt: UTCInstant?

        struct Sink: PollSink {
            let store: RecordingStore
            func upsert(_ incident: Incident) throws { store.pending.append(incident) }
            func reject(_ record: RejectedRecord) throws { store.rejected.append(record) }
        }
        var pending: [Incident] = []
        var rejected: [RejectedRecord] = []

        func ingest(_ poll: PollContext, _ produce: (any PollSink) throws -> ResponseVerdict) throws -> IngestRun {
            pending = []
            let verdict = try produce(Sink(store: self))  // a throw discards `pending`, like a rollback
            if !poll.dryRun { stored += pending }
            return IngestRun(source: poll.source, startedAt: poll.startedAt, finishedAt: poll.startedAt,
                             status: verdict.isComplete ? .succeeded : .incomplete,
                             counts: IngestCounts(fetched: pending.count, inserted: pending.count), origin: poll.origin,
                             warnings: verdict.incompleteBecause + verdict.warnings)
        }

        func recordRun(_ run: IngestRun) throws { runs.append(run) }
        func quotaResumesAt(source: String) throws -> UTCInstant? { resumesAt }
    }

    static let now = UTCInstant(rfc3339: "2024-01-01T00:00:00Z")!

    func ingest(_ store: RecordingStore) -> IngestIncidents {
        IngestIncidents(store: store, clock: .fixed(Self.now), describe: { String(describing: $0) })
    }

    @Test("each provider's sample response polls into mapped incidents", arguments: ["gits", "its"])
    func samples(provider: String) async throws {
        let source = SourceDefinition(name: "\(provider)-test", provider: provider, key: APIKey("k+1/2="))
        let feed = try ProviderRegistry.feed(for: source, client: StubHTTPClient())
        let store = RecordingStore()
        let run = await ingest(store)(feed)
        #expect(run.status == .succeeded)
        #expect(run.counts.fetched == 1)
        let incident = try #require(store.stored.first)
        #expect(incident.source == "\(provider)-test")
        #expect(incident.startedAt?.rfc3339 == (provider == "gits" ? "2024-01-01T00:00:00Z" : "2024-01-01T00:00:00Z"))
        #expect(incident.category == (provider == "gits" ? .accident : .roadwork))
    }

    @Test("an HTTP error becomes a failed run with a log-safe error; nothing is stored")
    func httpError() async throws {
        let client = StubHTTPClient { _, _ in .response(StubResponse(statusCode: 503, text: "busy")) }
        let feed = try ProviderRegistry.feed(for: SourceDefinition(name: "gits", provider: "gits", key: APIKey("SECRET+k")), client: client)
        let store = RecordingStore()
        let run = await ingest(store)(feed)
        #expect(run.status == .failed)
        #expect(run.error?.contains("HTTP 503") == true)
        #expect(run.error?.contains("SECRET") == false)
        #expect(store.stored.isEmpty)
        #expect(store.runs.map(\.status) == [.failed])
    }

    @Test("a 429 after the retries is a quota error: the run records when the source may run again")
    func tooManyRequests() async throws {
        let client = StubHTTPClient { _, _ in .response(StubResponse(statusCode: 429, headers: ["Retry-After": "120"], text: "")) }
        let feed = try ProviderRegistry.feed(for: SourceDefinition(name: "its", provider: "its", key: APIKey("k")), client: client)
        let store = RecordingStore()
        let run = await ingest(store)(feed)
        #expect(run.status == .failed)
        #expect(run.resumesAt == Self.now.adding(seconds: 120))
    }

    @Test("a bare 429 (no Retry-After) is a failed poll that pauses nothing: the next poll tries again, not the next midnight",
          arguments: ["gits", "its", "open511"])
    func bareTooManyRequests(provider: String) async throws {
        let client = StubHTTPClient { _, _ in .response(StubResponse(statusCode: 429, headers: [:], text: "Too Many Requests")) }
        var definition = SourceDefinition(name: provider, provider: provider, key: APIKey("k"))
        definition.baseURL = URL(string: "http://127.0.0.1:9/events")
        let feed = try ProviderRegistry.feed(for: definition, client: client)
        let run = await ingest(RecordingStore())(feed)
        #expect(run.status == .failed)
        #expect(run.resumesAt == nil)
        #expect(run.error?.contains("HTTP 429 Too Many Requests") == true && run.error?.contains("the next poll tries again") == true, "\(run.error ?? "")")
    }

    @Test("an exhausted source is skipped without a request")
    func skipped() async throws {
        let client = StubHTTPClient { _, _ in
            Issue.record("no request may be sent for an exhausted source")
            return .response(StubResponse(text: ""))
        }
        let feed = try ProviderRegistry.feed(for: SourceDefinition(name: "gits", provider: "gits", key: APIKey("k")), client: client)
        let store = RecordingStore()
        store.resumesAt = Self.now.adding(seconds: 60)
        let run = await ingest(store)(feed)
        #expect(run.status == .skipped)
        #expect(run.error?.contains("2024-01-01T00:01:00Z") == true)
        #expect(store.runs.map(\.status) == [.skipped])
    }

    @Test("a record that cannot be mapped is set aside with its reason; the rest of the poll reaches the store")
    func badRecord() async throws {
        let client = StubHTTPClient { _, _ in
            .response(StubResponse(text: "<ServiceResult><msgHeader><headerCd>0</headerCd></msgHeader><msgBody><itemList><regSeq>1</regSeq></itemList><itemList><startDate>bad</startDate></itemList></msgBody></ServiceResult>"))
        }
        let feed = try ProviderRegistry.feed(for: SourceDefinition(name: "gits", provider: "gits", key: APIKey("k")), client: client)
        let store = RecordingStore()
        let run = await ingest(store)(feed)
        #expect(run.status == .succeeded)
        #expect(store.stored.map(\.externalID) == ["1"])
        #expect(store.rejected.map(\.externalID) == [nil])
        #expect(store.rejected.map(\.reason) == ["the record has no regSeq"])
        #expect(store.rejected.map(\.excerpt) == ["startDate=bad"])
    }
}
