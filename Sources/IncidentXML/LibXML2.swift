#if canImport(Glibc)
import Glibc
#endif
internal import CLibXML2

/// libxml2, opened on first use (CLibXML2): a process that parses no XML never loads it, nor the
/// ICU and liblzma libraries Debian's libxml2 needs (docs/development.md, "C libraries opened on
/// first use"). The first libxml2 call loads it, or prints "XML feeds need libxml2: apt-get
/// install libxml2 (dlopen's reason)" and aborts.
enum LibXML2 {
    /// Opens it (once; thread-safe): nil, or why it cannot be, to show as it is.
    static func loadFailure() -> String? { taking(clibxml2_load()) }

    /// The message ``loadFailure()`` gives when `soname` cannot be opened (nil when it can): for tests.
    static func failure(opening soname: String) -> String? { taking(clibxml2_probe(soname)) }

    private static func taking(_ message: UnsafeMutablePointer<CChar>?) -> String? {
        guard let message else { return nil }
        defer { free(message) }
        return String(cString: message)
    }
}
