import Foundation
import IncidentCore
import IncidentNetworking
import Synchronization

/// Delivers the change feed to the configuration's watches (docs/analyst.md, "Watches"), from
/// each watch's position in the database (``WatchPositions``): every transition after it, in
/// cursor order, that the watch wants goes to its target as the JSON of `incidents changes`
/// (``ChangesCommand/json(_:now:)``): POSTed to a webhook, signed, or given to a command
/// (``WatchTargets``).
///
/// Several scheduler hosts may share the database: a host claims a watch before delivering it,
/// so one host at a time delivers it, and renews the claim before each attempt for longer than
/// the attempt may take (`lease` + the watch's `timeout`), so no other host can claim it while
/// an attempt is under way. The cursor moves in the database only after a 2xx (or exit 0), and
/// only while this host still holds the claim: each transition is delivered by one host, none is
/// skipped (cursors are handed out in commit order), and a transition is delivered again only
/// when its host stopped between the receiver's answer and that record (kill -9, a database
/// unreachable for a whole claim): the repeat carries the same `X-Incidents-Cursor`. A failed
/// delivery is retried with the watch's backoff; when its retries run out the watch stops for
/// this turn at that transition (its failure recorded) and a later turn starts there again,
/// after a rest that doubles with each such turn (``restSeconds(afterFailedTurns:)``).
final class WatchDelivery: Sendable {
    /// What delivering needs of the store.
    typealias Store = any IncidentReader & ChangeFeedReader & WatchPositions & StoreExecution

    let store: Store
    let logger: Logger
    /// This scheduler process in the watches' claims (its ``SchedulerService/holder``).
    let holder: LeaseHolder
    /// The scheduler's clock: the database server's when it has one (``ServerClock``).
    let clock: UTCClock
    /// How long a claim lasts beyond an attempt's timeout (the configuration's `lease`).
    let leaseSeconds: Int64
    /// The variables a command inherits (``WatchTargets/commandEnvironment(_:)``).
    let environment: [String: String]
    /// The watches configured now (a SIGHUP reload replaces them: ``reconfigure(_:)``).
    private let configured = Mutex<[WatchDefinition]>([])

    /// Transitions read per query.
    static let page = 200
    /// Per watch whose turns ended in a failed delivery: how many in a row, and the earliest
    /// monotonic instant of its next turn (``restSeconds(afterFailedTurns:)``). In memory: a
    /// new process tries at once.
    private let resting = Mutex<[String: (turns: Int, until: ContinuousClock.Instant)]>([:])

    /// How long a watch rests after `turns` turns in a row ended in a failed delivery (its
    /// retries ran out each time): 2, 4, 8 … seconds, at most 5 minutes, so a receiver that is
    /// down is not tried (and logged) every second of `run --loop`.
    static func restSeconds(afterFailedTurns turns: Int) -> Double {
        min(300, pow(2, Double(min(turns, 9))))
    }

    /// - Throws: ``ConfigurationError`` when the store keeps no change feed or no watch positions.
    init(store: Stores.Writable, holder: LeaseHolder, clock: UTCClock, leaseSeconds: Int64, environment: [String: String],
         logger: Logger) throws {
        guard let store = store as? Store else { throw ConfigurationError("watches need a store with a change feed") }
        self.store = store
        self.holder = holder
        self.clock = clock
        self.leaseSeconds = leaseSeconds
        self.environment = WatchTargets.commandEnvironment(environment)
        self.logger = logger
    }

    /// Before the first poll: takes the cursors of an earlier version's state file (`legacyState`,
    /// ``Configuration/legacyWatchState(database:)``) over into the database for the watches it
    /// does not know yet, renames the file `FILE.imported`, then registers the configured watches
    /// the database does not know, each at its `from` (`end`: after what is committed now, so
    /// this run's own transitions are delivered).
    /// - Throws: the store's errors, ``ConfigurationError`` for a state file that cannot be read.
    func start(_ watches: [WatchDefinition], legacyState: String?) async throws {
        if let legacyState, FileManager.default.fileExists(atPath: legacyState) {
            let entries = try WatchState.read(legacyState).sorted { $0.key < $1.key }
            let taken = try await store.perform { [store] in
                try store.registerWatches(entries.map { (watch: $0.key, start: WatchStart.after($0.value.cursor)) })
            }
            let renamed = legacyState + ".imported"
            let moved = rename(legacyState, renamed) == 0
            logger.log(moved ? .info : .warning, "watch.state_imported", [
                "file": legacyState, "watches": taken.map { "\($0.watch)@\($0.cursor)" }.joined(separator: ","),
                "renamed_to": moved ? renamed : nil,
                "detail": moved ? "the database keeps the watches' positions now"
                    : "could not rename it (\(String(cString: strerror(errno)))); the database keeps the positions, the file is ignored where it knows a watch",
            ])
        }
        configured.withLock { $0 = watches }
        try await register(watches)
    }

    /// At a SIGHUP reload: a new watch is registered at its `from` and delivered from the next
    /// turn, a removed one stops (its position stays in the database: added again under the
    /// same name, it resumes there), a changed one (filters, target, secret) keeps its
    /// position. A delivery under way of a removed or changed watch stops before its next
    /// transition.
    func reconfigure(_ watches: [WatchDefinition]) async {
        let previous = configured.withLock { current in
            defer { current = watches }
            return current
        }
        let before = Dictionary(previous.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let names = Set(watches.map(\.name))
        for watch in previous where !names.contains(watch.name) {
            logger.log(.info, "watch.stopped", ["watch": watch.name, "detail": "removed from the configuration; its position stays"])
        }
        for watch in watches {
            if before[watch.name] == nil {
                logger.log(.info, "watch.started", ["watch": watch.name, "target": watch.targetDescription])
            } else if before[watch.name] != watch {
                logger.log(.info, "watch.changed", ["watch": watch.name, "target": watch.targetDescription, "detail": "keeps its position"])
            }
        }
        do {
            try await register(watches)
        } catch {
            // Registered at the next turn instead.
            logger.log(.error, "watch.failed", ["error": ErrorText.describe(error)])
        }
    }

    private func register(_ watches: [WatchDefinition]) async throws {
        let starts = watches.map { (watch: $0.name, start: $0.start) }
        for position in try await store.perform({ [store] in try store.registerWatches(starts) }) {
            logger.log(.info, "watch.registered", ["watch": position.watch, "cursor": position.cursor])
        }
    }

    /// How often `run --loop` looks for transitions to deliver: 0.2 s. A turn that finds every
    /// watch at the feed's last cursor reads two rows (the positions and the cursor), so a short
    /// turn costs little, and another host's commit waits at most this long for its delivery to
    /// start; a poll of this process starts a turn at once (``wake()``). (With a turn of 1 s,
    /// Scripts/bench --history measured 1.80 s from commit to webhook at p95, against issue 22's 1 s.)
    static let turnSeconds = 0.2

    /// Set by ``wake()`` while no turn waits: the next wait of ``deliverForever(every:)`` ends at
    /// once. Else the continuation of the wait under way.
    private let bell = Mutex<(rung: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))

    /// Starts the next turn of ``deliverForever(every:)`` now: a poll of this process committed
    /// transitions (``PollingLoop/logged``). During a turn, another follows it at once (the
    /// turn may have read the log before that commit).
    func wake() {
        let waiter = bell.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let waiter = state.waiter else {
                state.rung = true
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }

    /// Until cancelled: a turn, then another `interval` seconds after it ends or when woken
    /// (`run --loop`).
    func deliverForever(every interval: Double) async {
        while !Task.isCancelled {
            await deliver()
            await pause(upTo: interval)
        }
    }

    /// Returns after `seconds`, when woken (``wake()``), or when the task is cancelled.
    private func pause(upTo seconds: Double) async {
        let timer = Task { [weak self] in
            try? await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
            if !Task.isCancelled { self?.wake() }
        }
        defer { timer.cancel() }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
                let rung = bell.withLock { state in
                    if state.rung {
                        state.rung = false
                        return true
                    }
                    state.waiter = waiter
                    return false
                }
                if rung { waiter.resume() }
            }
        } onCancel: {
            wake()
        }
    }

    /// One turn: every watch that is behind the change feed and that no other host delivers,
    /// up to the last committed transition.
    func deliver() async {
        let watches = configured.withLock { $0 }
        guard !watches.isEmpty else { return }
        let positions: [String: WatchPosition]
        let last: Int64
        do {
            let read = try await store.perform { [store] in
                (Dictionary(try store.watchPositions().map { ($0.watch, $0) }, uniquingKeysWith: { first, _ in first }), try store.lastCursor())
            }
            positions = read.0
            last = read.1
            let unknown = watches.filter { positions[$0.name] == nil }
            if !unknown.isEmpty { try await register(unknown) }  // a registration that failed at a reload
        } catch {
            logger.log(.error, "watch.failed", ["error": ErrorText.describe(error)])
            return
        }
        for watch in watches where !Task.isCancelled {
            guard let position = positions[watch.name], position.cursor < last else { continue }
            if let rest = resting.withLock({ $0[watch.name] }), ContinuousClock.now < rest.until { continue }
            await deliver(watch)
        }
    }

    /// Delivers `watch` up to the last committed transition when this host can claim it.
    private func deliver(_ watch: WatchDefinition) async {
        let hold = leaseSeconds + Int64(watch.timeoutSeconds.rounded(.up)) + 1
        let (name, holder, clock, store) = (watch.name, self.holder, self.clock, self.store)
        var cursor: Int64 = 0
        /// When the claim was last claimed or renewed (monotonic).
        var renewedAt = ContinuousClock.now
        /// Moves the stored cursor to `to`, renewing the claim: false (logged) when another
        /// scheduler took the watch over.
        func advance(to: Int64, delivered: Bool) async throws -> Bool {
            let from = cursor
            let asked = ContinuousClock.now
            guard try await store.perform({ try store.advanceWatch(name, holder: holder, from: from, to: to, delivered: delivered,
                                                                    now: clock.now(), holdSeconds: hold) }) else {
                logger.log(.warning, "watch.lost", [
                    "watch": name, "cursor": from,
                    "detail": "another scheduler took this watch over (this one was cut off from the database for a whole claim)",
                ])
                return false
            }
            cursor = to
            renewedAt = asked
            return true
        }
        let session = WatchTargets.session(watch)
        defer { session.finishTasksAndInvalidate() }
        do {
            let asked = ContinuousClock.now
            guard let claimed = try await store.perform({ try store.claimWatch(name, holder: holder, now: clock.now(), holdSeconds: hold) }) else {
                logger.log(.debug, "watch.left_to_other", ["watch": name])
                return
            }
            cursor = claimed.cursor
            renewedAt = asked
            var passed = cursor  // the last transition passed over, recorded or not
            reading: while !Task.isCancelled {
                let after = passed
                let changes = try await store.perform { try store.changes(after: after, limit: Self.page) }
                guard !changes.isEmpty else { break }
                let matching = try await store.perform { try self.matches(watch, changes) }
                for change in changes {
                    // Removed or changed at a reload: the next turn delivers by the new definition.
                    guard !Task.isCancelled, configured.withLock({ $0.contains(watch) }) else { break reading }
                    guard matching.contains(change.transition.cursor) else {
                        passed = change.transition.cursor
                        continue
                    }
                    // Before an attempt the claim must last beyond it: renewed (recording what was
                    // passed over) unless it was renewed less than half a lease ago.
                    let outcome = await WatchTargets.deliver(change, to: watch, session: session, now: clock.now(), environment: environment,
                                                             logger: logger) {
                        if ContinuousClock.now - renewedAt < .seconds(Double(leaseSeconds) / 2) { return true }
                        do {
                            return try await advance(to: passed, delivered: false)
                        } catch {
                            logger.log(.error, "watch.failed", ["watch": name, "cursor": cursor, "error": ErrorText.describe(error)])
                            return false
                        }
                    }
                    switch outcome {
                    case .delivered:
                        _ = resting.withLock { $0.removeValue(forKey: name) }
                        // Not recorded (another host took the watch): it delivers this one again.
                        let recorded = try await advance(to: change.transition.cursor, delivered: true)
                        if !recorded { throw WatchStop() }
                        passed = cursor
                    case .failed(let failure):
                        let at = clock.now()
                        try await store.perform { try store.recordWatchFailure(name, holder: holder, error: failure, at: at) }
                        let turns = resting.withLock { resting in
                            let turns = (resting[name]?.turns ?? 0) + 1
                            resting[name] = (turns, ContinuousClock.now + .seconds(Self.restSeconds(afterFailedTurns: turns)))
                            return turns
                        }
                        logger.log(.info, "watch.resting", ["watch": name, "cursor": change.transition.cursor, "failed_turns": turns,
                                                            "next_turn_in_s": Self.restSeconds(afterFailedTurns: turns)])
                        throw WatchStop()
                    case .cancelled, .lost:
                        throw WatchStop()
                    }
                }
                if changes.count < Self.page { break }
            }
            if passed > cursor { _ = try await advance(to: passed, delivered: false) }
        } catch is WatchStop {
        } catch {
            logger.log(.error, "watch.failed", ["watch": name, "cursor": cursor, "error": ErrorText.describe(error)])
        }
        do {
            try await store.perform { try store.releaseWatch(name, holder: holder) }
        } catch {
            logger.log(.warning, "watch.release_failed", ["watch": name, "error": ErrorText.describe(error)])
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

    /// A watch stopped for this turn (logged where it stopped).
    private struct WatchStop: Error {}
}

/// The state file of an earlier version: a JSON object of each watch's position by name
/// (`{"suwon": {"cursor": 2, "lastError": …}}`). Read once, to take the cursors over into the
/// database (``WatchDelivery/start(_:legacyState:)``); the last errors are not taken over.
enum WatchState {
    struct Entry: Decodable, Sendable {
        var cursor: Int64
    }

    /// The positions; empty when the file does not exist.
    /// - Throws: ``ConfigurationError`` when it cannot be read or is not such an object.
    static func read(_ path: String) throws -> [String: Entry] {
        switch FileText.read(path, limit: 1 << 20) {
        case .missing: return [:]
        case .text(let text):
            guard let entries = try? JSONDecoder().decode([String: Entry].self, from: Data(text.utf8)) else {
                throw ConfigurationError("the watch state file \(path) is not a JSON object of watch positions; move it away (each watch then starts at its 'from')")
            }
            return entries
        case .unreadable(let reason), .notText(let reason):
            throw ConfigurationError("cannot read the watch state file \(path): \(reason)")
        }
    }
}
