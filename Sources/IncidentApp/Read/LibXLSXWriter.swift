#if canImport(Glibc)
import Glibc
#endif
internal import CXLSX

/// libxlsxwriter, for `--format xlsx`, opened on first use (CXLSX): a process that never needs it never loads
/// it (docs/development.md, "C libraries opened on first use").
enum LibXLSXWriter {
    /// Opens it (once; thread-safe): nil, or why it cannot be, to show as it is:
    /// "--format xlsx needs libxlsxwriter4: apt-get install libxlsxwriter4 (dlopen's reason)".
    static func loadFailure() -> String? { taking(cxlsx_load()) }

    /// The message ``loadFailure()`` gives when `soname` cannot be opened (nil when it can): for tests.
    static func failure(opening soname: String) -> String? { taking(cxlsx_probe(soname)) }

    private static func taking(_ message: UnsafeMutablePointer<CChar>?) -> String? {
        guard let message else { return nil }
        defer { free(message) }
        return String(cString: message)
    }
}

/// A C library the command needs is not installed: says which package to install.
struct LibraryUnavailable: Error, CustomStringConvertible {
    var description: String
}
