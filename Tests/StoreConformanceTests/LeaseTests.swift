import Foundation
import IncidentCore
import Synchronization
@testable import IncidentPostgres
@testable import IncidentSQLite
import TestSupport
import Testing

/// Several stores on one database, standing in for scheduler hosts: SQLite, one file opened by
/// `count` connections; PostgreSQL, one database reached by `count` stores (pools).
func withSharedStores<T>(_ kind: StoreKind, count: Int, clock: UTCClock = .fixed(t0),
                         _ body: ([any TestStore]) throws -> T) throws -> T {
    switch kind {
    case .sqlite:
        let directory = try TestPaths.temporaryDirectory("leases")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("incidents.sqlite").path
        return try body(try (0..<count).map { _ in try SQLiteStore(path: path, clock: clock) })
    case .postgres:
        return try TestServer.withDatabase { name in
            try body(try (0..<count).map { _ in try PostgresStore(try TestServer.location(database: name), clock: clock) })
        }
    }
}

/// A process id that no process has: a child that has exited and been reaped.
func deadPID() throws -> Int32 {
    let child = Process()
    child.executableURL = URL(fileURLWithPath: "/bin/true")
    try child.run()
    child.waitUntilExit()
    return child.processIdentifier
}

@Suite("Source leases: one scheduler per source and interval (every store)")
struct LeaseTests {
    static let interval: Int64 = 300
    static let leaseSeconds: Int64 = 120
    /// The documented claim of a scheduler turn: nobody else started within 0.9 intervals.
    static func turn(_ now: UTCInstant) -> UTCInstant { now.adding(seconds: -interval * 9 / 10) }

    @Test("twelve holders on four hosts claim one source at the same instant: exactly one wins, the others see its lease",
          arguments: StoreKind.allCases)
    func simultaneousClaims(kind: StoreKind) throws {
        try withSharedStores(kind, count: 3) { stores in
            // Live processes, so that SQLite's dead-holder rule does not apply.
            let pids: [Int32] = [1, getppid(), getpid()]
            let holders = (0..<12).map { LeaseHolder(host: "host-\($0 % 4)", pid: pids[$0 / 4]) }
            let answers = Mutex<[LeaseClaim]>([])
            let failures = Mutex<[String]>([])
            DispatchQueue.concurrentPerform(iterations: holders.count) { index in
                do {
                    let answer = try stores[index % 3].claim(source: "gits", holder: holders[index], now: t0,
                                                            leaseSeconds: Self.leaseSeconds, notStartedAfter: Self.turn(t0))
                    answers.withLock { $0.append(answer) }
                } catch {
                    failures.withLock { $0.append(String(describing: error)) }
                }
            }
            #expect(failures.withLock { $0 } == [])
            let all = answers.withLock { $0 }
            let winners = all.compactMap { if case .claimed(let lease) = $0 { lease } else { nil } }
            try #require(winners.count == 1)
            let winner = winners[0]
            #expect(winner.expiresAt == t0.adding(seconds: Self.leaseSeconds))
            #expect(winner.lastStartedAt == t0)
            #expect(try stores[0].lease(of: "gits") == winner)
            // Each loser was told who holds it: the winner (same host: its lease; other host: also the fresh start).
            for answer in all where answer != .claimed(winner) {
                #expect(answer.lease == winner)
                if case .claimed = answer { Issue.record("two holders claimed the lease") }
            }
        }
    }

    @Test("a lease runs out at its expiry; until then only its holder may claim or renew it", arguments: StoreKind.allCases)
    func expiry(kind: StoreKind) throws {
        try withStore(kind) { store in
            let a = LeaseHolder(host: "host-a", pid: 11), b = LeaseHolder(host: "host-b", pid: 22)
            let first = try store.claim(source: "gits", holder: a, now: t0, leaseSeconds: 60, notStartedAfter: nil)
            #expect(first == .claimed(SourceLease(source: "gits", holder: a, expiresAt: t0.adding(seconds: 60), lastStartedAt: t0)))
            #expect(try store.claim(source: "gits", holder: b, now: t0.adding(seconds: 59), leaseSeconds: 60, notStartedAfter: nil)
                    == .held(first.lease))
            // The holder renews during a long poll; the other host cannot.
            #expect(try store.renew(source: "gits", holder: a, now: t0.adding(seconds: 50), leaseSeconds: 60))
            #expect(try !store.renew(source: "gits", holder: b, now: t0.adding(seconds: 50), leaseSeconds: 60))
            #expect(try store.lease(of: "gits")?.expiresAt == t0.adding(seconds: 110))
            #expect(try store.claim(source: "gits", holder: b, now: t0.adding(seconds: 109), leaseSeconds: 60, notStartedAfter: nil).lease.holder == a)
            // Expired (the holder died without releasing): another host takes it.
            let taken = try store.claim(source: "gits", holder: b, now: t0.adding(seconds: 110), leaseSeconds: 60, notStartedAfter: nil)
            #expect(taken == .claimed(SourceLease(source: "gits", holder: b, expiresAt: t0.adding(seconds: 170),
                                                  lastStartedAt: t0.adding(seconds: 110))))
            // The old holder has lost it: renewing says so, releasing changes nothing.
            #expect(try !store.renew(source: "gits", holder: a, now: t0.adding(seconds: 111), leaseSeconds: 60))
            try store.release(source: "gits", holder: a)
            #expect(try store.lease(of: "gits") == taken.lease)
            // Released: not held, the start time kept; the holder's claim of its own lease works while it runs.
            try store.release(source: "gits", holder: b)
            #expect(try store.lease(of: "gits") == SourceLease(source: "gits", holder: b, expiresAt: nil, lastStartedAt: t0.adding(seconds: 110)))
            #expect(try !store.renew(source: "gits", holder: b, now: t0.adding(seconds: 112), leaseSeconds: 60))
            #expect(try store.lease(of: "other") == nil)
        }
    }

    @Test("a scheduler turn is refused while another host started the source less than 0.9 intervals ago", arguments: StoreKind.allCases)
    func notStartedAfter(kind: StoreKind) throws {
        try withStore(kind) { store in
            let a = LeaseHolder(host: "host-a", pid: 11), b = LeaseHolder(host: "host-b", pid: 22)
            _ = try store.claim(source: "gits", holder: a, now: t0, leaseSeconds: Self.leaseSeconds, notStartedAfter: Self.turn(t0))
            try store.release(source: "gits", holder: a)
            let early = t0.adding(seconds: Self.interval * 9 / 10 - 1)
            #expect(try store.claim(source: "gits", holder: b, now: early, leaseSeconds: Self.leaseSeconds, notStartedAfter: Self.turn(early))
                    == .recentlyStarted(SourceLease(source: "gits", holder: a, expiresAt: nil, lastStartedAt: t0)))
            let due = t0.adding(seconds: Self.interval * 9 / 10)
            #expect(try store.claim(source: "gits", holder: b, now: due, leaseSeconds: Self.leaseSeconds, notStartedAfter: Self.turn(due))
                    == .claimed(SourceLease(source: "gits", holder: b, expiresAt: due.adding(seconds: Self.leaseSeconds), lastStartedAt: due)))
        }
    }

    @Test("cron runs `run --once` on three hosts in the same minute: one polls; a second manual run on that host polls again on SQLite (one scheduler at a time), is refused on PostgreSQL (another process)",
          arguments: StoreKind.allCases)
    func onceFromCron(kind: StoreKind) throws {
        try withSharedStores(kind, count: 3) { stores in
            let sources = ["gits", "its-seoul", "its-gyeonggi"]
            let minute = t0
            var polls: [String: [String]] = [:]
            // Each host's run starts a few seconds apart and polls each source it can claim.
            for (offset, host) in ["host-a", "host-b", "host-c"].enumerated() {
                let holder = LeaseHolder(host: host, pid: 4000)
                let now = minute.adding(seconds: Int64(offset * 2))
                for source in sources {
                    if case .claimed = try stores[offset].claim(source: source, holder: holder, now: now, leaseSeconds: Self.leaseSeconds,
                                                                 notStartedAfter: Self.turn(now)) {
                        polls[source, default: []].append(host)
                        try stores[offset].release(source: source, holder: holder)
                    }
                }
            }
            #expect(polls == Dictionary(uniqueKeysWithValues: sources.map { ($0, ["host-a"]) }))
            // An operator runs `run --once` by hand on host-a a minute later. SQLite: its own
            // host's start does not refuse it (a scheduler holds the whole database, so the cron
            // run has ended). PostgreSQL: another process, on the same host or not, waits for
            // 0.9 intervals after a start (two loops on one host both polled, issue 24).
            let manual = LeaseHolder(host: "host-a", pid: 4100, token: "manual")
            let later = minute.adding(seconds: 60)
            let claim = try stores[0].claim(source: "gits", holder: manual, now: later, leaseSeconds: Self.leaseSeconds,
                                            notStartedAfter: Self.turn(later))
            switch kind {
            case .sqlite:
                #expect(claim.lease.holder == manual)
                try stores[0].release(source: "gits", holder: manual)
            case .postgres:
                #expect(claim == .recentlyStarted(SourceLease(source: "gits", holder: LeaseHolder(host: "host-a", pid: 4000), expiresAt: nil,
                                                              lastStartedAt: minute)))
                // The cron run's own process may claim again.
                #expect(try stores[0].claim(source: "gits", holder: LeaseHolder(host: "host-a", pid: 4000), now: later,
                                            leaseSeconds: Self.leaseSeconds, notStartedAfter: Self.turn(later)).lease.expiresAt != nil)
            }
            // The next cron minute, one interval later: the first host to come polls again.
            let next = minute.adding(seconds: Self.interval)
            #expect(try stores[1].claim(source: "its-seoul", holder: LeaseHolder(host: "host-b", pid: 4200), now: next,
                                        leaseSeconds: Self.leaseSeconds, notStartedAfter: Self.turn(next)).lease.holder.host == "host-b")
        }
    }

    @Test("PostgreSQL: two processes with the same host name and pid (two containers, pid 1), told apart by their tokens: a live lease of one refuses the other, and so does its start less than 0.9 intervals ago")
    func sameHostAndPidOtherProcess() throws {
        try withSharedStores(.postgres, count: 2) { stores in
            let first = LeaseHolder(host: "scheduler", pid: 1, token: "a1"), second = LeaseHolder(host: "scheduler", pid: 1, token: "b2")
            let claimed = try stores[0].claim(source: "gits", holder: first, now: t0, leaseSeconds: Self.leaseSeconds, notStartedAfter: Self.turn(t0))
            #expect(claimed == .claimed(SourceLease(source: "gits", holder: first, expiresAt: t0.adding(seconds: Self.leaseSeconds), lastStartedAt: t0)))
            let soon = t0.adding(seconds: 5)
            #expect(try stores[1].claim(source: "gits", holder: second, now: soon, leaseSeconds: Self.leaseSeconds, notStartedAfter: nil) == .held(claimed.lease))
            #expect(try stores[1].renew(source: "gits", holder: second, now: soon, leaseSeconds: Self.leaseSeconds) == false)
            try stores[1].release(source: "gits", holder: second)  // not its lease: changes nothing
            #expect(try stores[0].lease(of: "gits") == claimed.lease)
            try stores[0].release(source: "gits", holder: first)
            #expect(try stores[1].claim(source: "gits", holder: second, now: soon, leaseSeconds: Self.leaseSeconds,
                                        notStartedAfter: Self.turn(soon)).lease.holder == first)
            let due = t0.adding(seconds: Self.interval)
            #expect(try stores[1].claim(source: "gits", holder: second, now: due, leaseSeconds: Self.leaseSeconds,
                                        notStartedAfter: Self.turn(due)).lease.holder == second)
        }
    }

    @Test("SQLite: a lease of a dead process on the same host counts as expired; a live one holds; PostgreSQL waits for the expiry",
          arguments: StoreKind.allCases)
    func deadHolder(kind: StoreKind) throws {
        try withStore(kind) { store in
            let host = ProcessInfo.processInfo.hostName
            let dead = LeaseHolder(host: host, pid: try deadPID())
            let alive = LeaseHolder(host: host, pid: getppid())
            let me = LeaseHolder(host: host, pid: getpid())
            _ = try store.claim(source: "dead", holder: dead, now: t0, leaseSeconds: 600, notStartedAfter: nil)
            _ = try store.claim(source: "alive", holder: alive, now: t0, leaseSeconds: 600, notStartedAfter: nil)
            let later = t0.adding(seconds: 1)
            let takeover = try store.claim(source: "dead", holder: me, now: later, leaseSeconds: 600, notStartedAfter: Self.turn(later))
            switch kind {
            case .sqlite: #expect(takeover.lease.holder == me)
            case .postgres: #expect(takeover == .held(SourceLease(source: "dead", holder: dead, expiresAt: t0.adding(seconds: 600), lastStartedAt: t0)))
            }
            #expect(try store.claim(source: "alive", holder: me, now: later, leaseSeconds: 600, notStartedAfter: nil).lease.holder == alive)
        }
    }

    @Test("three schedulers x six sources over twelve intervals: one poll per source and interval; a dead scheduler's sources move on",
          arguments: StoreKind.allCases)
    func loopSimulation(kind: StoreKind) throws {
        try withSharedStores(kind, count: 3) { stores in
            let sources = (1...6).map { "source-\($0)" }
            let hosts = (0..<3).map { LeaseHolder(host: "host-\($0)", pid: 500 + Int32($0)) }
            var generator = SplitMix64(seed: 15)
            // Each host wakes for each source at its own phase, then every interval plus up to 10 % jitter.
            var wakes: [(at: Int64, host: Int, source: String)] = []
            for (h, _) in hosts.enumerated() {
                for source in sources {
                    var at = Int64(generator.next() % UInt64(Self.interval))
                    while at < 12 * Self.interval {
                        wakes.append((at, h, source))
                        at += Self.interval + Int64(generator.next() % UInt64(Self.interval / 10))
                    }
                }
            }
            wakes.sort { ($0.at, $0.host) < ($1.at, $1.host) }
            let deathAt = 5 * Self.interval  // host-0 is killed (kill -9) mid-poll: its leases stay until they expire
            var starts: [String: [(at: Int64, host: Int)]] = [:]
            for wake in wakes where !(wake.host == 0 && wake.at >= deathAt) {
                let now = t0.adding(seconds: wake.at)
                let answer = try stores[wake.host].claim(source: wake.source, holder: hosts[wake.host], now: now,
                                                         leaseSeconds: Self.leaseSeconds, notStartedAfter: Self.turn(now))
                guard case .claimed = answer else { continue }
                starts[wake.source, default: []].append((wake.at, wake.host))
                // A poll takes 20 s; host-0 dies during its polls after deathAt and never releases.
                if !(wake.host == 0 && wake.at + 20 >= deathAt) { try stores[wake.host].release(source: wake.source, holder: hosts[wake.host]) }
            }
            for source in sources {
                let polls = try #require(starts[source])
                #expect(polls.count >= 10, "\(source): \(polls)")
                #expect(!polls.contains { $0.host == 0 && $0.at >= deathAt }, "\(source): \(polls)")
                let lastOfDead = polls.last { $0.host == 0 }?.at
                for (earlier, later) in zip(polls, polls.dropFirst()) {
                    let gap = later.at - earlier.at
                    // Never twice within 0.9 intervals. A live holder polls again within 1.1 intervals
                    // (its own jitter); after the dead scheduler's last poll, another takes over at its
                    // next turn once 0.9 intervals (more than the lease) have passed: 0.9 + 1.1 intervals.
                    let bound = earlier.at == lastOfDead ? Self.interval * 2 : Self.interval * 11 / 10
                    #expect((Self.interval * 9 / 10...bound).contains(gap), "\(source): \(earlier) → \(later)")
                }
            }
        }
    }
}
