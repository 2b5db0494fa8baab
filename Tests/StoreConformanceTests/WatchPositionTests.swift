import Foundation
import IncidentCore
import Synchronization
@testable import IncidentPostgres
@testable import IncidentSQLite
import Testing

/// Each watch's position in the database (issue 22 item 5; IncidentCore's `WatchPositions`):
/// registration at a start, a claim that one holder at a time has, and an advance that moves the
/// cursor only for the holder and only from the cursor it read. Every store.
@Suite("Watch positions: registered, claimed by one holder, advanced only by it (every store)")
struct WatchPositionTests {
    static func positions(_ store: any TestStore) throws -> any WatchPositions {
        try #require(store as? any WatchPositions)
    }

    /// Live holders (SQLite takes a claim of a dead pid on this host as expired).
    static let a = LeaseHolder(host: "host-a", pid: getpid(), token: "a1")
    static let b = LeaseHolder(host: "host-b", pid: getppid(), token: "b1")

    @Test("registration: end (after the committed transitions), start, a cursor, one beyond the end (taken as the end); a known watch keeps its position",
          arguments: StoreKind.allCases)
    func registration(kind: StoreKind) throws {
        try withStore(kind) { store in
            let watches = try Self.positions(store)
            try poll(store, live("A", "B", "C"), at: t0)
            #expect(try store.lastCursor() == 3)
            let registered = try watches.registerWatches([("end", .end), ("start", .after(0)), ("two", .after(2)), ("beyond", .after(99))])
            #expect(registered.map { "\($0.watch)@\($0.cursor)" } == ["end@3", "start@0", "two@2", "beyond@3"])
            try poll(store, live("A", "B"), at: t1)
            // Known: untouched, and not reported; a new one at the new end.
            let again = try watches.registerWatches([("end", .after(0)), ("new", .end)])
            #expect(again.map { "\($0.watch)@\($0.cursor)" } == ["new@4"])
            #expect(try watches.watchPositions().map { "\($0.watch)@\($0.cursor)" } == ["beyond@3", "end@3", "new@4", "start@0", "two@2"])
            #expect(try watches.watchPositions().allSatisfy { $0.holder == nil && $0.expiresAt == nil && $0.deliveredAt == nil && $0.lastError == nil })
        }
    }

    @Test("a claim: one holder at a time until it releases or its claim expires; its own claim is claimed again; an unknown watch is nobody's",
          arguments: StoreKind.allCases)
    func claims(kind: StoreKind) throws {
        try withSharedStores(kind, count: 2) { stores in
            let (one, two) = (try Self.positions(stores[0]), try Self.positions(stores[1]))
            try one.registerWatches([("w", .after(0))])
            #expect(try one.claimWatch("unknown", holder: Self.a, now: t0, holdSeconds: 70) == nil)
            let claimed = try #require(try one.claimWatch("w", holder: Self.a, now: t0, holdSeconds: 70))
            #expect(claimed.cursor == 0 && claimed.expiresAt == t0.adding(seconds: 70) && claimed.holder?.host == "host-a")
            #expect(try two.claimWatch("w", holder: Self.b, now: t0.adding(seconds: 69), holdSeconds: 70) == nil)
            #expect(try one.claimWatch("w", holder: Self.a, now: t0.adding(seconds: 10), holdSeconds: 70) != nil, "its own claim")
            // Expired: another holder takes it.
            let taken = try #require(try two.claimWatch("w", holder: Self.b, now: t0.adding(seconds: 81), holdSeconds: 70))
            #expect(taken.holder?.host == "host-b")
            #expect(try one.claimWatch("w", holder: Self.a, now: t0.adding(seconds: 82), holdSeconds: 70) == nil)
            // Released: the next claim succeeds at once.
            try two.releaseWatch("w", holder: Self.b)
            #expect(try one.watchPositions().first?.expiresAt == nil)
            #expect(try one.claimWatch("w", holder: Self.a, now: t0.adding(seconds: 83), holdSeconds: 70)?.holder?.host == "host-a")
        }
    }

    @Test("twelve holders claim one watch at the same instant: exactly one gets it", arguments: StoreKind.allCases)
    func simultaneousClaims(kind: StoreKind) throws {
        try withSharedStores(kind, count: 3) { stores in
            try Self.positions(stores[0]).registerWatches([("w", .after(0))])
            let pids: [Int32] = [1, getppid(), getpid()]
            let holders = (0..<12).map { LeaseHolder(host: "host-\($0 % 4)", pid: pids[$0 / 4], token: "t\($0)") }
            let winners = Mutex<[LeaseHolder]>([])
            let failures = Mutex<[String]>([])
            DispatchQueue.concurrentPerform(iterations: holders.count) { index in
                do {
                    if try Self.positions(stores[index % 3]).claimWatch("w", holder: holders[index], now: t0, holdSeconds: 60) != nil {
                        winners.withLock { $0.append(holders[index]) }
                    }
                } catch {
                    failures.withLock { $0.append(String(describing: error)) }
                }
            }
            #expect(failures.withLock { $0 } == [])
            #expect(winners.withLock { $0.count } == 1, "\(winners.withLock { $0 })")
        }
    }

    @Test("an advance moves the cursor only for the holder and only from the cursor it read; delivered stamps the time; a failure is kept",
          arguments: StoreKind.allCases)
    func advances(kind: StoreKind) throws {
        try withSharedStores(kind, count: 2) { stores in
            let (one, two) = (try Self.positions(stores[0]), try Self.positions(stores[1]))
            try one.registerWatches([("w", .after(0))])
            _ = try one.claimWatch("w", holder: Self.a, now: t0, holdSeconds: 60)
            #expect(try two.advanceWatch("w", holder: Self.b, from: 0, to: 5, delivered: true, now: t0, holdSeconds: 60) == false, "not the holder")
            #expect(try one.advanceWatch("w", holder: Self.a, from: 1, to: 5, delivered: true, now: t0, holdSeconds: 60) == false, "not its cursor")
            #expect(try one.advanceWatch("w", holder: Self.a, from: 0, to: 3, delivered: false, now: t0.adding(seconds: 5), holdSeconds: 60))
            #expect(try one.advanceWatch("w", holder: Self.a, from: 3, to: 5, delivered: true, now: t0.adding(seconds: 9), holdSeconds: 60))
            try one.recordWatchFailure("w", holder: Self.a, error: "HTTP 503", at: t0.adding(seconds: 12))
            try two.recordWatchFailure("w", holder: Self.b, error: "not the holder's", at: t0.adding(seconds: 13))
            let position = try #require(try two.watchPositions().first)
            #expect(position.cursor == 5 && position.deliveredAt == t0.adding(seconds: 9) && position.expiresAt == t0.adding(seconds: 69))
            #expect(position.lastError == "HTTP 503" && position.lastErrorAt == t0.adding(seconds: 12))
            // Renewing (to == from) extends the claim; once released nothing moves.
            #expect(try one.advanceWatch("w", holder: Self.a, from: 5, to: 5, delivered: false, now: t0.adding(seconds: 30), holdSeconds: 60))
            #expect(try two.claimWatch("w", holder: Self.b, now: t0.adding(seconds: 80), holdSeconds: 60) == nil)
            try one.releaseWatch("w", holder: Self.a)
            #expect(try one.advanceWatch("w", holder: Self.a, from: 5, to: 6, delivered: true, now: t0.adding(seconds: 31), holdSeconds: 60) == false)
            // Taken by another: the former holder's advance finds nothing.
            _ = try two.claimWatch("w", holder: Self.b, now: t0.adding(seconds: 32), holdSeconds: 60)
            #expect(try one.advanceWatch("w", holder: Self.a, from: 5, to: 6, delivered: true, now: t0.adding(seconds: 33), holdSeconds: 60) == false)
            #expect(try one.watchPositions().first?.cursor == 5)
        }
    }

    @Test("SQLite: the claim of a process of this host that no longer runs counts as expired (a scheduler killed mid-delivery)")
    func deadHolder() throws {
        try withSharedStores(.sqlite, count: 1) { stores in
            let watches = try Self.positions(stores[0])
            try watches.registerWatches([("w", .after(0))])
            let dead = LeaseHolder(host: Self.a.host, pid: try deadPID())
            #expect(try watches.claimWatch("w", holder: dead, now: t0, holdSeconds: 600) != nil)
            #expect(try watches.claimWatch("w", holder: Self.a, now: t0.adding(seconds: 1), holdSeconds: 600)?.holder?.pid == getpid())
        }
    }

    @Test("PostgreSQL 0010 on a database of the previous version: the change feed stays, watch_positions starts empty and registers at its end")
    func migration0010() throws {
        try TestServer.withDatabase { name in
            let location = try TestServer.location(database: name)
            let previous = try PostgresMigrator.bundled(without: { $0 == "0010_watch_positions.sql" })
            try poll(try PostgresStore(location, clock: .fixed(t0), migrator: previous), live("A", "B"), at: t0)
            let store = try PostgresStore(location, clock: .fixed(t1))
            #expect(try store.migrationStates().first { $0.name == "0010_watch_positions.sql" }.map { [$0.name, $0.appliedAt?.rfc3339] }
                    == ["0010_watch_positions.sql", t1.rfc3339])
            #expect(try store.lastCursor() == 2)
            #expect(try store.watchPositions() == [])
            #expect(try store.registerWatches([("w", .end)]) == [WatchPosition(watch: "w", cursor: 2)])
        }
    }
}
