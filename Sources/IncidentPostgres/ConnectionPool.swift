import Dispatch
import Foundation

/// Up to `capacity` connections, each lent to one caller at a time, so that the sources a
/// scheduler polls at once each write in their own transaction.
///
/// A connection that broke (the server restarted, the network dropped) is closed when it is
/// returned or found broken when lent, and a new one is made. While the server cannot be
/// reached (refused, starting up, shutting down), connecting is retried for up to
/// `reconnectSeconds`, so a server restart costs the poll under way (it fails, nothing of it is
/// stored) and no more: the failure is then recorded once the server is back. A caller whose
/// task is cancelled (SIGTERM, a deadline) tries once and does not wait for the server.
///
/// Each lent connection carries the label of the work it serves (a source's name), so that
/// ``interrupt(label:)`` can stop that work's statement from another thread.
final class ConnectionPool: @unchecked Sendable {  // all state is behind `condition`
    private let condition = NSCondition()
    private var idle: [Connection] = []
    private var lent = 0
    /// The lent connections, their labels and lend numbers (so that a late interruption
    /// spares the next borrower of the same connection).
    private var inUse: [ObjectIdentifier: (connection: Connection, label: String?, lend: Int)] = [:]
    private var lends = 0
    let capacity: Int
    private let reconnectSeconds: Double
    /// Connects; the argument is the longest one attempt may take (seconds).
    private let connect: @Sendable (Int) throws -> Connection

    init(capacity: Int, reconnectSeconds: Double, connect: @escaping @Sendable (Int) throws -> Connection) {
        self.capacity = max(1, capacity)
        self.reconnectSeconds = reconnectSeconds
        self.connect = connect
    }

    /// Runs `body` with a connection of its own, lent under `label`; waits while all
    /// `capacity` are lent.
    /// - Throws: ``PostgresError`` when no connection can be made, or what `body` throws.
    /// A caller whose task is already cancelled (recording a poll that SIGTERM or a deadline
    /// stopped) gets ``cancelledCallSeconds``: then its statement is interrupted, so that a
    /// network that stopped answering cannot hold up the end of the process.
    /// `reconnect` false: one attempt to connect, for calls that are repeated anyway (a lease
    /// renewal), so that they do not hold a slot of the pool while the server is down.
    func withConnection<T>(label: String? = nil, reconnect: Bool = true, _ body: (Connection) throws -> T) throws -> T {
        let connection = try lend(reconnect: reconnect)
        condition.lock()
        lends += 1
        let lend = lends
        inUse[ObjectIdentifier(connection)] = (connection, label, lend)
        connection.statementObserver = observer
        condition.unlock()
        defer { giveBack(connection) }
        if Task.isCancelled {
            let id = ObjectIdentifier(connection)
            DispatchQueue.global().asyncAfter(deadline: .now() + Self.cancelledCallSeconds) { [self] in
                condition.lock()
                defer { condition.unlock() }
                if let entry = inUse[id], entry.lend == lend { entry.connection.interrupt() }
            }
        }
        return try body(connection)
    }

    /// Given to every connection lent while it is set (``Connection/statementObserver``).
    var statementObserver: ((Connection, String, [PostgresValue]) -> Void)? {
        get { condition.lock(); defer { condition.unlock() }; return observer }
        set { condition.lock(); defer { condition.unlock() }; observer = newValue }
    }
    private var observer: ((Connection, String, [PostgresValue]) -> Void)?

    /// How long a call made after its task was cancelled may take.
    static let cancelledCallSeconds = 3.0

    /// Interrupts the statements under way on the connections lent under `label` (every lent
    /// connection when nil): see ``Connection/interrupt()``. Their callers get an error at once.
    func interrupt(label: String?) {
        condition.lock()
        defer { condition.unlock() }
        for entry in inUse.values where label == nil || entry.label == label { entry.connection.interrupt() }
    }

    private func lend(reconnect: Bool) throws -> Connection {
        condition.lock()
        while idle.isEmpty && lent >= capacity { condition.wait() }
        lent += 1
        while let connection = idle.popLast() {
            if connection.isUsable {
                condition.unlock()
                return connection
            }
        }
        condition.unlock()
        do {
            return try connectRetrying(reconnect ? reconnectSeconds : 0)
        } catch {
            condition.lock()
            lent -= 1
            condition.signal()
            condition.unlock()
            throw error
        }
    }

    /// Keeps a returned connection for the next caller, unless it broke. A broken one most
    /// often means the server restarted or the network dropped, which broke the idle ones too,
    /// though libpq may not see it on them until they are used (`isUsable` reads the server's
    /// goodbye, not the closed socket behind it): they are closed with it, so that no caller
    /// meets a dead connection (a lost run record, a failed lease claim or release).
    private func giveBack(_ connection: Connection) {
        connection.statementObserver = nil
        let usable = connection.isUsable
        condition.lock()
        inUse[ObjectIdentifier(connection)] = nil
        lent -= 1
        if usable { idle.append(connection) } else { idle.removeAll() }
        condition.signal()
        condition.unlock()
    }

    private func connectRetrying(_ seconds: Double) throws -> Connection {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            do {
                // A cancelled caller (recording the poll SIGTERM stopped) waits for no slow network;
                // an attempt inside a window ends with it (libpq's least timeout is 2 s).
                let left = seconds > 0 ? Int(deadline.timeIntervalSinceNow.rounded(.up)) : 5
                return try connect(Task.isCancelled ? 2 : max(2, min(5, left)))
            } catch let error as PostgresError where error.isServerUnavailable && Date() < deadline && !Task.isCancelled {
                Thread.sleep(forTimeInterval: 0.5)
            }
        }
    }
}

extension PostgresError {
    /// The server could not be reached or is not accepting connections yet (refused, no
    /// socket, starting up, in crash recovery or shutting down): worth connecting again shortly.
    var isServerUnavailable: Bool {
        guard isConnectionFailure else { return false }
        return ["Connection refused", "No such file or directory", "the database system is starting up",
                "the database system is shutting down", "the database system is in recovery mode",
                // 57P03 during crash recovery, before the server accepts connections again:
                "the database system is not yet accepting connections",
                "server closed the connection", "timeout expired"].contains { message.contains($0) }
    }
}
