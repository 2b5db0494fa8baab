import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import IncidentNetworking
import TestSupport

@Suite("StubHTTPClient")
struct StubHTTPClientTests {
    private func router(sample: StubResponse?) throws -> TestRouter {
        TestRouter(baseURL: try #require(URL(string: "http://provider.example")), path: "feed",
                   task: .queryParameters([.key("serviceKey", APIKey(FakeKey.raw))]), sampleResponse: sample)
    }

    @Test("Answers from the router's sampleResponse through a temporary file, removed afterwards")
    func sampleResponse() async throws {
        let directory = try TestPaths.temporaryDirectory("stub")
        let client = StubHTTPClient(configuration: NetworkConfiguration(temporaryDirectory: directory))
        let sample = StubResponse(headers: ["Content-Type": "text/xml"], text: "<ServiceResult/>")
        let (data, file) = try await fetchData(client, try router(sample: sample))
        #expect(String(decoding: data, as: UTF8.self) == "<ServiceResult/>")
        #expect(file.statusCode == 200)
        #expect(file.contentType == "text/xml")
        #expect(file.headers == ["content-type": "text/xml"])
        #expect(file.byteCount == 16)
        #expect(leftovers(in: directory).isEmpty)
    }

    @Test("A responder overrides sample data and sees the built request")
    func responder() async throws {
        let client = StubHTTPClient { _, request in
            .response(StubResponse(text: request.url?.query ?? ""))
        }
        let (data, _) = try await fetchData(client, try router(sample: nil))
        #expect(String(decoding: data, as: UTF8.self) == "serviceKey=\(FakeKey.encoded)")
    }

    @Test("A non-2xx sample throws unacceptableStatus with the redacted excerpt; 401 is not retried")
    func errorStatus() async throws {
        let sample = StubResponse(statusCode: 401, headers: ["Retry-After": "7"], text: #"{"header":{"resultCode":4005,"resultMsg":"key \#(FakeKey.raw)"}}"#)
        let error = try #require(await networkError { try await fetchData(StubHTTPClient(), try router(sample: sample)) })
        #expect(error.code == .unacceptableStatus(401))
        #expect(error.statusCode == 401)
        #expect(error.attempts == 1)
        #expect(error.retryAfterSeconds == 7)
        #expect(error.bodyExcerpt?.contains("4005") == true)
        #expect(FakeKey.leaks(in: error.description + (error.bodyExcerpt ?? "")).isEmpty)
    }

    @Test("Error descriptions are one line even when the body has many; a 500 is retried like over URLSession")
    func oneLineDescription() async throws {
        let sample = StubResponse(statusCode: 500, text: "<html>\n<body>\r\nerror\n</body>\n</html>\n")
        let error = try #require(await networkError { try await fetchData(StubHTTPClient(), try router(sample: sample)) })
        #expect(error.attempts == 4, "RetryPolicy.default: 3 retries, not waited for by the stub's default configuration")
        #expect(!error.description.contains("\n") && !error.description.contains("\r"))
        #expect(error.description.contains("HTTP 500 Internal Server Error"))
        #expect(error.bodyExcerpt?.contains("\n") == true, "the excerpt itself is kept as sent")
    }

    @Test("No responder and no sample: invalidRequest")
    func missingSample() async throws {
        let error = await networkError { try await fetchData(StubHTTPClient(), try router(sample: nil)) }
        #expect(error?.code == .invalidRequest)
    }

    @Test("A script simulates failures in order, through the same retries: timeout, refused, then the body")
    func script() async throws {
        let recorder = SleepRecorder()
        var configuration = StubTransport.defaultConfiguration
        configuration.sleep = recorder.sleep
        configuration.random = { 1 }
        let client = StubHTTPClient(configuration: configuration, script: [
            .failure(.timedOut), .failure(.cannotConnect, detail: "connection refused"), .response(StubResponse(text: "third")),
        ])
        let (data, _) = try await fetchData(client, try router(sample: nil))
        #expect(String(decoding: data, as: UTF8.self) == "third")
        #expect(recorder.delays == [0.5, 1])
        // The last outcome repeats for later calls.
        let (again, _) = try await fetchData(client, try router(sample: nil))
        #expect(String(decoding: again, as: UTF8.self) == "third")
        #expect(recorder.delays == [0.5, 1])
    }

    @Test("A 2xx body over maxBodyBytes is bodyTooLarge, as over URLSession")
    func bodyTooLarge() async throws {
        var configuration = StubTransport.defaultConfiguration
        configuration.maxBodyBytes = 3
        let client = StubHTTPClient(configuration: configuration, script: [.response(StubResponse(text: "four"))])
        let error = await networkError { try await fetchData(client, try router(sample: nil)) }
        #expect(error?.code == .bodyTooLarge)
        #expect(error?.attempts == 1)
    }

    @Test("A router that cannot build its request: invalidRequest, zero attempts")
    func invalidRouter() async throws {
        let broken = TestRouter(baseURL: URL(fileURLWithPath: "/tmp"), path: "x", sampleResponse: StubResponse(text: "x"))
        let error = await networkError { try await fetchData(StubHTTPClient(), broken) }
        #expect(error?.code == .invalidRequest)
        #expect(error?.attempts == 0)
        #expect(error?.detail?.contains("invalidBaseURL") == true)
    }
}
