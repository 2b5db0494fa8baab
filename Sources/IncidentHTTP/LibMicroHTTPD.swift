#if canImport(Glibc)
import Glibc
#endif
internal import CMicroHTTPD

/// libmicrohttpd, under the HTTP server, opened on first use (CMicroHTTPD): a process that never needs it never loads
/// it (docs/development.md, "C libraries opened on first use").
enum LibMicroHTTPD {
    /// Opens it (once; thread-safe): nil, or why it cannot be, to show as it is:
    /// "incidents serve needs libmicrohttpd12: apt-get install libmicrohttpd12 (dlopen's reason)".
    static func loadFailure() -> String? { taking(cmhd_load()) }

    /// The message ``loadFailure()`` gives when `soname` cannot be opened (nil when it can): for tests.
    static func failure(opening soname: String) -> String? { taking(cmhd_probe(soname)) }

    private static func taking(_ message: UnsafeMutablePointer<CChar>?) -> String? {
        guard let message else { return nil }
        defer { free(message) }
        return String(cString: message)
    }
}
