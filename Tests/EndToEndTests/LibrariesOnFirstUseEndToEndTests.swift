import Foundation
import TestSupport
import Testing

/// Issue 23, "start fast": a query against SQLite loads only what it uses. libpq, libmicrohttpd,
/// libxlsxwriter and libxml2 are opened when a command first needs them (docs/development.md, "C
/// libraries opened on first use"), as the dynamic loader itself reports (LD_DEBUG=files).
/// libcurl is opened on first use too, in a build with Swift's static runtime (`Scripts/install`);
/// the tests run the dynamic build, whose FoundationNetworking library loads it.
@Suite("End to end: C libraries opened on first use")
struct LibrariesOnFirstUseEndToEndTests {
    static let onFirstUse: Set<String> = ["libpq.so.5", "libmicrohttpd.so.12", "libxlsxwriter.so.4", "libxml2.so.2"]

    /// Runs `incidents ARGS` on the analyst fixture: its result and the shared objects the loader opened.
    static func opened(_ arguments: [String]) async throws -> (result: ProcessResult, libraries: Set<String>) {
        let result = try await run("incidents", arguments + ["--database", AnalystFixture.database], environment: ["LD_DEBUG": "files"])
        // `   1234:	file=libpq.so.5 [0];  needed by …` or `…;  dynamically loaded by …`
        let opened = result.stderr.split(separator: "\n").compactMap { line -> String? in
            guard let start = line.range(of: "file=") else { return nil }
            return String(line[start.upperBound...].prefix { $0 != " " })
        }
        return (result, Set(opened))
    }

    @Test("a SQLite query opens SQLite and none of libpq, libmicrohttpd, libxlsxwriter, libxml2")
    func query() async throws {
        let (result, libraries) = try await Self.opened(["list", "--limit", "2", "--format", "ndjson"])
        #expect(result.status == 0, "\(result.stderr.suffix(500))")
        #expect(result.stdout.split(separator: "\n").count == 2)
        #expect(libraries.contains("libsqlite3.so.0"))
        #expect(libraries.intersection(Self.onFirstUse).isEmpty)
    }

    @Test("--format xlsx opens libxlsxwriter when it writes, and nothing else of the four")
    func xlsx() async throws {
        let path = try TestPaths.temporaryDirectory("first-use").appendingPathComponent("out.xlsx").path
        let (result, libraries) = try await Self.opened(["list", "--limit", "5", "--format", "xlsx", "--output", path])
        #expect(result.status == 0, "\(result.stderr.suffix(500))")
        #expect(FileManager.default.fileExists(atPath: path))
        #expect(libraries.intersection(Self.onFirstUse) == ["libxlsxwriter.so.4"])
    }
}
