#if canImport(Glibc)
import Glibc
#endif
internal import CCurl

/// libcurl, under Foundation's URLSession, opened on first use (CCurl): a process that never needs it never loads
/// it (docs/development.md, "C libraries opened on first use").
public enum Libcurl {
    /// Opens it (once; thread-safe): nil, or why it cannot be, to show as it is:
    /// "HTTP requests need libcurl4: apt-get install libcurl4 (dlopen's reason)".
    public static func loadFailure() -> String? { taking(ccurl_load()) }

    /// The message ``loadFailure()`` gives when `soname` cannot be opened (nil when it can): for tests.
    static func failure(opening soname: String) -> String? { taking(ccurl_probe(soname)) }

    private static func taking(_ message: UnsafeMutablePointer<CChar>?) -> String? {
        guard let message else { return nil }
        defer { free(message) }
        return String(cString: message)
    }
}
