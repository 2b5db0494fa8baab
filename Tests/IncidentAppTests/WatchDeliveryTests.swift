import Foundation
@testable import IncidentApp
import IncidentCore
import Testing
import TestSupport

/// `run --loop`'s delivery turns (``WatchDelivery/deliverForever(every:)``) on a real SQLite file
/// and a loopback receiver, with turns an hour apart: only ``WatchDelivery/wake()`` (a poll of
/// this process that logged transitions) can deliver within the test.
@Suite("Watch delivery turns")
struct WatchDeliveryTests {
    static let t0 = UTCInstant(rfc3339: "2024-01-01T00:00:00Z")!

    /// One live poll of `ids` of source `gits`.
    static func poll(_ store: Stores.Writable, _ ids: [String], at instant: UTCInstant) throws {
        _ = try store.ingest(PollContext(source: "gits", startedAt: instant)) { sink in
            for id in ids { try sink.upsert(Incident(source: "gits", externalID: id, category: .accident, road: "경부고속도로")) }
            return .complete
        }
    }

    /// Polls until `condition` holds, for at most `timeout` seconds.
    static func within(_ timeout: Double, _ condition: () async throws -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(timeout)
        while ContinuousClock.now < deadline {
            if try await condition() { return true }
            try await Task.sleep(nanoseconds: 20_000_000)
        }
        return try await condition()
    }

    @Test("a wake starts a delivery turn at once instead of at the next turn; each poll's transitions are delivered once, in order")
    func wakeStartsTurn() async throws {
        let server = try await LoopbackServer.start(routes: ["/hook": [.status(200)]])
        defer { server.stop() }
        let directory = try TestPaths.temporaryDirectory("watch-wake")
        let config = directory.appendingPathComponent("config.json")
        try #"""
            {"sources": [{"name": "gits", "provider": "gits", "keyEnv": "K"}],
             "watches": [{"name": "hook", "url": "\#(server.url("/hook").absoluteString)", "secretEnv": "S"}]}
            """#.write(to: config, atomically: true, encoding: .utf8)
        let watches = try Configuration.load(from: config, environment: ["K": "k", "S": "s3cret"]).watches
        let store = try Stores.openForWriting(directory.appendingPathComponent("db.sqlite").path, clock: .fixed(Self.t0))
        let delivery = try WatchDelivery(store: store, holder: LeaseHolder(host: "wake-test", pid: getpid()), clock: .fixed(Self.t0),
                                         leaseSeconds: 60, environment: [:], logger: Logger(clock: .fixed(Self.t0)) { _ in })
        try await delivery.start(watches, legacyState: nil)  // at the end of the empty log
        let turns = Task { await delivery.deliverForever(every: 3600) }
        func cursors() async throws -> [String] { try await server.requests(path: "/hook").map { $0.headers["x-incidents-cursor"] ?? "?" } }

        try Self.poll(store, ["A", "B"], at: Self.t0)
        delivery.wake()
        #expect(try await Self.within(20) { try await cursors().count == 2 }, "the first poll's two appearances, after a wake")
        // Long after the first turn: only the wake can start the next one within the hour.
        try Self.poll(store, ["A"], at: Self.t0.adding(seconds: 60))
        delivery.wake()
        #expect(try await Self.within(20) { try await cursors().count == 3 }, "the second poll's clear of B, after a wake")
        turns.cancel()
        await turns.value
        #expect(try await cursors() == ["1", "2", "3"])
        #expect(try (store as? any WatchPositions)?.watchPositions().map(\.cursor) == [3])
    }
}

/// A command target's one attempt (``WatchTargets/run(_:input:environment:timeoutSeconds:)``):
/// how each ending is told.
@Suite("Watch command attempts")
struct WatchCommandTests {
    static func attempt(_ arguments: [String], timeout: Double = 10) async -> String {
        switch await WatchTargets.run(arguments, input: Data("{}".utf8), environment: ["PATH": "/usr/bin:/bin"], timeoutSeconds: timeout) {
        case .success: "delivered"
        case .failure(let failure): failure.text
        }
    }

    @Test("exit 0 delivers; an exit status, a signal, a timeout, a missing or non-executable program are each said")
    func endings() async throws {
        let directory = try TestPaths.temporaryDirectory("watch-command")
        let plain = directory.appendingPathComponent("plain.sh").path
        try "#!/bin/sh\nexit 0\n".write(toFile: plain, atomically: true, encoding: .utf8)
        #expect(await Self.attempt(["/bin/sh", "-c", "cat >/dev/null; exit 0"]) == "delivered")
        #expect(await Self.attempt(["/bin/sh", "-c", "echo first >&2; echo 'busy: retry' >&2; exit 3"]) == "exit status 3: busy: retry")
        #expect(await Self.attempt(["/bin/sh", "-c", "kill -USR1 $$"]) == "killed by signal \(SIGUSR1)")
        #expect(await Self.attempt(["/bin/sh", "-c", "sleep 30"], timeout: 0.5) == "timed out after 1s (killed)")
        #expect(await Self.attempt([directory.appendingPathComponent("missing").path]) == "cannot run \(directory.path)/missing: No such file or directory")
        #expect(await Self.attempt([plain]) == "cannot run \(plain): Permission denied")
    }
}
