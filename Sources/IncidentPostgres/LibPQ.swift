#if canImport(Glibc)
import Glibc
#endif
internal import CLibPQ

/// libpq, the PostgreSQL client library, opened on first use (CLibPQ): a process that never needs it never loads
/// it (docs/development.md, "C libraries opened on first use").
enum LibPQ {
    /// Opens it (once; thread-safe): nil, or why it cannot be, to show as it is:
    /// "PostgreSQL support needs libpq5: apt-get install libpq5 (dlopen's reason)".
    static func loadFailure() -> String? { taking(clibpq_load()) }

    /// The message ``loadFailure()`` gives when `soname` cannot be opened (nil when it can): for tests.
    static func failure(opening soname: String) -> String? { taking(clibpq_probe(soname)) }

    private static func taking(_ message: UnsafeMutablePointer<CChar>?) -> String? {
        guard let message else { return nil }
        defer { free(message) }
        return String(cString: message)
    }
}
