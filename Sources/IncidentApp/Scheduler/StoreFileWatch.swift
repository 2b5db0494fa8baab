import Foundation
import IncidentCore
import Synchronization

/// Checked before each poll of a scheduler whose store is a file (SQLite): whether the
/// database path and its lock file still name the files this process has open.
///
/// A database deleted under a running scheduler would take every later poll with it (the open
/// descriptor keeps the unlinked file, where nobody sees what is written), and a deleted lock
/// file lets a second scheduler start beside this one. So, before each poll:
/// - the database was deleted: the scheduler stops (``StoreFileLost``, exit 66) rather than write
///   into a file nobody sees or silently make a new, empty one; started again, it makes one;
/// - the lock file was deleted or replaced: the lock on the file at the path now is taken
///   (logged `scheduler.lock_retaken`); when another scheduler holds it, this one stops (exit 75);
/// - the database was replaced (a backup restored with `mv`): the file at the path is the
///   database now; it is opened, migrated when it is older (logged `database.reopened`), and
///   every later poll goes to it.
final class StoreFileWatch: Sendable {
    let database: String
    private let store: any StoreFile
    private let lock: (any HeldLock)?
    private let logger: Logger
    /// Why polling stopped, once it has; and who to tell.
    private let state = Mutex<(lost: StoreFileLost?, onLost: [@Sendable () -> Void])>((nil, []))

    init(database: String, store: any StoreFile, lock: (any HeldLock)?, logger: Logger) {
        self.database = database
        self.store = store
        self.lock = lock
        self.logger = logger
    }

    /// Why polling stopped; nil while it may go on.
    var lost: StoreFileLost? { state.withLock { $0.lost } }

    /// Calls `action` once polling must stop (at once when it already must).
    func whenLost(_ action: @escaping @Sendable () -> Void) {
        let now = state.withLock { state -> Bool in
            if state.lost != nil { return true }
            state.onLost.append(action)
            return false
        }
        if now { action() }
    }

    /// Checks the files (one check at a time) and reopens a replaced database: true when the
    /// poll may go ahead.
    func allowsPoll() -> Bool {
        let (lost, actions) = state.withLock { state -> (StoreFileLost?, [@Sendable () -> Void]) in
            guard state.lost == nil else { return (state.lost, []) }
            guard let found = check() else { return (nil, []) }
            state.lost = found
            defer { state.onLost = [] }
            return (found, state.onLost)
        }
        for action in actions { action() }
        return lost == nil
    }

    private func check() -> StoreFileLost? {
        let file = store.fileState()
        if file == .deleted { return .deleted(database: database) }
        // The database replaced and its lock file gone or replaced too: both were taken from
        // under this scheduler (deleted, and another scheduler made new ones), not a backup put
        // back in place. Re-locking the new lock file would poll into the other one's database.
        if file == .replaced, let lock, !lock.isInPlace() { return .deleted(database: database) }
        switch lock?.verify() ?? .held {
        case .held: break
        case .retaken:
            logger.log(.warning, "scheduler.lock_retaken", [
                "database": database,
                "detail": "the lock file beside the database was deleted or replaced; this scheduler locked the file there now",
            ])
        case .lost(let holder):
            return .lockTaken(database: database, holder: holder)
        }
        guard file == .replaced else { return nil }
        do {
            try store.reopen()
        } catch {
            return .unusable(database: database, cause: ErrorText.describe(error))
        }
        logger.log(.warning, "database.reopened", [
            "database": database,
            "detail": "another file was put at the database's path (a restored backup?); it is the database now, and every later poll is stored in it",
        ])
        return nil
    }
}

/// A scheduler stopped because its database file or lock file was taken from under it.
enum StoreFileLost: Error, Equatable, CustomStringConvertible {
    /// The database file was deleted (exit 66).
    case deleted(database: String)
    /// The lock file was deleted or replaced and another scheduler locked the new one (exit 75).
    case lockTaken(database: String, holder: String?)
    /// The file put at the database's path could not be opened as the database (exit 1).
    case unusable(database: String, cause: String)

    var description: String {
        switch self {
        case .deleted(let database):
            "the incidents database \(database) was deleted while this scheduler ran; it stopped rather than store polls in the deleted file or make a new, empty one unasked. Restore a backup there, or start it again to make a new database"
        case .lockTaken(let database, let holder):
            "the lock file of \(database) was deleted or replaced while this scheduler ran, and another incident-scheduler\(holder.map { " (\($0))" } ?? "") locked the new one; this one stopped"
        case .unusable(let database, let cause):
            "another file was put at the incidents database's path \(database), and it cannot be opened as the database: \(cause); this scheduler stopped"
        }
    }
}
