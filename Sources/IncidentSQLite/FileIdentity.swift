import Foundation
internal import CSQLite3
#if canImport(Glibc)
import Glibc
#endif

/// A file's identity: the device and inode numbers of `stat(2)`, which a path keeps only while
/// it names the same file (deleting it, or `rename(2)`-ing another file over it, changes them).
struct FileIdentity: Equatable {
    var device: UInt64
    var inode: UInt64

    /// The identity of the file `path` names (following symbolic links); nil when there is none.
    init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        self.init(info)
    }

    /// The identity of the open file `descriptor`; nil when it cannot be read.
    init?(descriptor: Int32) {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return nil }
        self.init(info)
    }

    private init(_ info: stat) {
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
    }
}

extension Database {
    /// Whether the main database file was deleted, renamed or replaced since it was opened
    /// (`SQLITE_FCNTL_HAS_MOVED`: the inode of SQLite's open descriptor against the path's).
    var hasMoved: Bool {
        var moved: Int32 = 0
        return sqlite3_file_control(handle, "main", SQLITE_FCNTL_HAS_MOVED, &moved) == SQLITE_OK && moved != 0
    }
}
