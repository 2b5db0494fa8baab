/// The time limits every transaction of the store sets for itself (`SET LOCAL`, so none
/// outlives the transaction, even through a pooler): a statement that runs too long, a lock
/// that is not granted, or a transaction left idle by a client that stopped talking (a network
/// partition that closes nothing) ends with an error on the server, which rolls the transaction
/// back and frees its locks for the host that takes over.
///
/// Seconds; 0 is no limit (PostgreSQL's own meaning). Server settings, see "Client Connection
/// Defaults" in the PostgreSQL 15 manual (`statement_timeout`, `lock_timeout`,
/// `idle_in_transaction_session_timeout`).
public struct PostgresTimeouts: Equatable, Sendable {
    /// `statement_timeout`: the longest one statement may run (a poll's `COPY` lasts as long as
    /// its response is read).
    public var statementSeconds: Int
    /// `lock_timeout`: the longest a statement waits for a lock (another poll of the same
    /// source, a migration).
    public var lockSeconds: Int
    /// `idle_in_transaction_session_timeout`: how long the server keeps a transaction whose
    /// client sends nothing.
    public var idleInTransactionSeconds: Int

    public init(statementSeconds: Int, lockSeconds: Int, idleInTransactionSeconds: Int) {
        self.statementSeconds = statementSeconds
        self.lockSeconds = lockSeconds
        self.idleInTransactionSeconds = idleInTransactionSeconds
    }

    /// 5 minutes per statement, 1 minute for a lock or an idle transaction.
    public static let standard = PostgresTimeouts(statementSeconds: 300, lockSeconds: 60, idleInTransactionSeconds: 60)

    /// For readers (`incidents`): no limit on an idle transaction, as a listing streamed into
    /// a pager that the user has paused leaves its transaction idle between fetches.
    public static let reading = PostgresTimeouts(statementSeconds: 300, lockSeconds: 60, idleInTransactionSeconds: 0)

    /// No limits (a copy of a whole database into an empty one, which nothing else waits for).
    public static let none = PostgresTimeouts(statementSeconds: 0, lockSeconds: 0, idleInTransactionSeconds: 0)

    /// For a scheduler whose leases last `leaseSeconds`: a lock or an idle transaction for no
    /// longer than a lease, so that a partitioned host's transaction is gone, with its locks,
    /// by the time its lease has run out and another host takes the source.
    public static func scheduler(leaseSeconds: Int64) -> PostgresTimeouts {
        let lease = Int(max(1, leaseSeconds))
        return PostgresTimeouts(statementSeconds: max(300, 5 * lease), lockSeconds: lease, idleInTransactionSeconds: lease)
    }

    /// The `SET LOCAL` statements.
    var settings: String {
        "SET LOCAL statement_timeout = '\(statementSeconds)s'; SET LOCAL lock_timeout = '\(lockSeconds)s'; "
            + "SET LOCAL idle_in_transaction_session_timeout = '\(idleInTransactionSeconds)s';"
    }
}
