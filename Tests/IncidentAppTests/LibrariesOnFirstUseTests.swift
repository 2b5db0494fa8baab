@testable import IncidentApp
@testable import IncidentHTTP
@testable import IncidentNetworking
@testable import IncidentPostgres
@testable import IncidentXML
import Testing

/// The C libraries opened on first use (issue 23, "start fast"; docs/development.md, "C libraries
/// opened on first use"): each opens here, and when its file is missing the message names the
/// Debian package that installs it, with the loader's reason.
@Suite("C libraries opened on first use")
struct LibrariesOnFirstUseTests {
    struct Library: Sendable, CustomStringConvertible {
        var soname: String
        var message: String
        var load: @Sendable () -> String?
        var open: @Sendable (String) -> String?
        var description: String { soname }
    }

    static let libraries = [
        Library(soname: "libpq.so.5", message: "PostgreSQL support needs libpq5: apt-get install libpq5",
                load: LibPQ.loadFailure, open: LibPQ.failure(opening:)),
        Library(soname: "libmicrohttpd.so.12", message: "incidents serve needs libmicrohttpd12: apt-get install libmicrohttpd12",
                load: LibMicroHTTPD.loadFailure, open: LibMicroHTTPD.failure(opening:)),
        Library(soname: "libxlsxwriter.so.4", message: "--format xlsx needs libxlsxwriter4: apt-get install libxlsxwriter4",
                load: LibXLSXWriter.loadFailure, open: LibXLSXWriter.failure(opening:)),
        Library(soname: "libcurl.so.4", message: "HTTP requests need libcurl4: apt-get install libcurl4",
                load: Libcurl.loadFailure, open: Libcurl.failure(opening:)),
        Library(soname: "libxml2.so.2", message: "XML feeds need libxml2: apt-get install libxml2",
                load: LibXML2.loadFailure, open: LibXML2.failure(opening:)),
    ]

    @Test("installed: it opens, and every function the program calls resolves", arguments: libraries)
    func opens(_ library: Library) {
        #expect(library.open(library.soname) == nil)
        #expect(library.load() == nil)
    }

    @Test("missing: the message names the package to install and the loader's reason", arguments: libraries)
    func missing(_ library: Library) {
        let absent = library.soname + ".0-absent"
        #expect(library.open(absent) == "\(library.message) (\(absent): cannot open shared object file: No such file or directory)")
    }
}
