import Foundation
import IncidentCore
import IncidentFeeds
import IncidentSQLite
import TestSupport
import Testing

/// The documentation's tables of provider options (docs/operator.md) and of query filters
/// (docs/analyst.md) are generated from their declarations (`FeedProvider.options`,
/// `IncidentFilter.Parameter`); these tests fail when they differ. `UPDATE_README=1` rewrites
/// them. Every relative link of README.md and docs/*.md names a file and heading that exist.
@Suite("README", .serialized)  // UPDATE_README=1 rewrites the files
struct ReadmeTests {

    /// The table: one row per option of each registered provider, in registry and declaration order.
    static func providerOptionsTable() -> String {
        var lines = ["| provider | field | accepts | default | meaning |", "| --- | --- | --- | --- | --- |"]
        for provider in ProviderRegistry.all {
            for option in provider.options {
                lines.append("| `\(provider.name)` | `sources[].\(option.name)` | \(option.typeName) | `\(option.defaultText)` | \(option.help) |")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The query filters: one row per parameter of the catalogue, in its order, with the index
    /// the SQLite store reads for it.
    static func filterTable() -> String {
        var lines = ["| filter | meaning | example | index (SQLite) |", "| --- | --- | --- | --- |"]
        for parameter in IncidentFilter.Parameter.allCases {
            // A cell's `|` is escaped, even in code (GitHub Flavored Markdown, "Tables").
            let usage = "`--\(parameter.name)\(parameter.kind == .flag ? "" : " " + parameter.placeholder)`"
                .replacingOccurrences(of: "|", with: "\\|")
            let meaning = parameter.help + (parameter.defaultValue.map { " Default: \($0)." } ?? "")
            let example = parameter.kind == .flag ? "`--\(parameter.name)`" : "`--\(parameter.name) \(parameter.example)`"
            lines.append("| \(usage) | \(meaning) | \(example) | \(SQLiteStore.index(for: parameter)) |")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Checks (or with `UPDATE_README=1` rewrites) the text of `file` (relative to the package)
    /// between the markers `name:begin` and `name:end`.
    static func checkGenerated(_ name: String, in file: String, _ expected: String) throws {
        let url = TestPaths.packageRoot.appendingPathComponent(file)
        let readme = try String(contentsOf: url, encoding: .utf8)
        let begin = "<!-- \(name):begin -->\n", end = "<!-- \(name):end -->"
        let start = try #require(readme.range(of: begin), "\(file) has no \(begin)")
        let stop = try #require(readme.range(of: end, range: start.upperBound..<readme.endIndex))
        if ProcessInfo.processInfo.environment["UPDATE_README"] == "1" {
            try (readme[..<start.upperBound] + expected + readme[stop.lowerBound...]).write(to: url, atomically: true, encoding: .utf8)
        } else {
            #expect(String(readme[start.upperBound..<stop.lowerBound]) == expected,
                    "\(file)'s \(name) table differs from the declarations; run UPDATE_README=1 swift test --filter ReadmeTests")
        }
    }

    @Test("docs/operator.md's provider option table is the one the declarations give")
    func providerOptions() throws {
        try Self.checkGenerated("provider-options", in: "docs/operator.md", Self.providerOptionsTable())
    }

    /// Its examples are checked to parse by FilterCatalogueTests.
    @Test("docs/analyst.md's filter table is the catalogue's")
    func filters() throws {
        try Self.checkGenerated("query-filters", in: "docs/analyst.md", Self.filterTable())
        #expect(Self.filterTable().contains("| `--road text` | The road name or its canonical name (고속국도1호선) contains this text"))
    }

    @Test("the table has a row for every declared option")
    func everyOption() {
        let table = Self.providerOptionsTable()
        #expect(table.contains("| `its` | `sources[].bbox` | 4 numbers | `124.0,33.0,132.0,39.0` |"))
        #expect(table.contains("| `its` | `sources[].format` | one of json, xml | `json` |"))
        let optionCount = ProviderRegistry.all.reduce(0) { $0 + $1.options.count }
        #expect(table.split(separator: "\n").count == 2 + optionCount)
    }

    /// The files the documentation is made of: README.md and every `docs/*.md`, relative to the package.
    static func documentationFiles() throws -> [String] {
        let docs = try FileManager.default.contentsOfDirectory(atPath: TestPaths.packageRoot.appendingPathComponent("docs").path)
        return ["README.md"] + docs.filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }
    }

    /// The lines of a Markdown text outside fenced code blocks.
    static func proseLines(_ text: String) -> [Substring] {
        var inFence = false
        return text.split(separator: "\n", omittingEmptySubsequences: false).filter { line in
            if line.hasPrefix("```") { inFence.toggle(); return false }
            return !inFence
        }
    }

    /// GitHub's anchor of a heading: lowercased, every character but letters, digits, `-`, `_` and
    /// spaces removed, spaces turned into `-`; a repeated anchor gets `-1`, `-2`, … .
    static func anchors(_ text: String) -> Set<String> {
        var seen: [String: Int] = [:], anchors = Set<String>()
        for line in proseLines(text) {
            guard let hashes = line.firstIndex(where: { $0 != "#" }), hashes != line.startIndex,
                  line.distance(from: line.startIndex, to: hashes) <= 6, line[hashes] == " " else { continue }
            let slug = String(String.UnicodeScalarView(line[hashes...].trimmingCharacters(in: .whitespaces).lowercased().unicodeScalars
                .filter { CharacterSet.alphanumerics.contains($0) || "-_ ".unicodeScalars.contains($0) }))
                .replacingOccurrences(of: " ", with: "-")
            let count = seen[slug, default: 0]
            seen[slug] = count + 1
            anchors.insert(count == 0 ? slug : "\(slug)-\(count)")
        }
        return anchors
    }

    @Test("GitHub's anchors: punctuation removed, spaces to -, lowercase, repeats numbered")
    func anchorRule() {
        #expect(Self.anchors("## More than one machine (PostgreSQL)\n### DATEX II sources (`datex2`)\n## First run, then schedule it\n# Development\n## Development\n```\n# not a heading\n```\n")
                == ["more-than-one-machine-postgresql", "datex-ii-sources-datex2", "first-run-then-schedule-it", "development", "development-1"])
    }

    /// Every relative link of README.md and docs/*.md (`](docs/operator.md#install)`,
    /// `](../README.md)`, `](#query)`) names a file that exists and, with `#`, one of its headings.
    @Test("every relative link of README.md and docs/*.md reaches an existing file and heading")
    func links() throws {
        let root = TestPaths.packageRoot
        let files = try Self.documentationFiles()
        #expect(files.contains("docs/operator.md") && files.contains("docs/analyst.md") && files.contains("docs/providers.md") && files.contains("docs/development.md"))
        let link = try NSRegularExpression(pattern: #"\]\(([^)\s]+)\)"#)
        var checked = 0
        for file in files {
            let text = try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)
            // Inline code is not a link.
            let prose = Self.proseLines(text).joined(separator: "\n")
                .replacingOccurrences(of: "`[^`]*`", with: "", options: .regularExpression)
            for match in link.matches(in: prose, range: NSRange(prose.startIndex..., in: prose)) {
                let target = String(prose[Range(match.range(at: 1), in: prose)!])
                if target.contains("://") || target.hasPrefix("mailto:") { continue }
                let parts = target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
                let directory = root.appendingPathComponent(file).deletingLastPathComponent()
                let url = parts[0].isEmpty ? root.appendingPathComponent(file) : directory.appendingPathComponent(String(parts[0])).standardizedFileURL
                guard FileManager.default.fileExists(atPath: url.path) else {
                    Issue.record("\(file): the link \(target) names no file")
                    continue
                }
                if parts.count == 2 {
                    let anchors = Self.anchors(try String(contentsOf: url, encoding: .utf8))
                    #expect(anchors.contains(String(parts[1])), "\(file): the link \(target) names no heading of \(url.lastPathComponent)")
                }
                checked += 1
            }
        }
        #expect(checked >= 20, "only \(checked) relative links found")
    }

    /// README.md stays short: the two commands first (the demo, and the test command `.ci/run` runs),
    /// a tour and links; the guides are in docs/.
    @Test("README.md starts with the two commands and stays under 10 KB")
    func readmeShape() throws {
        let readme = try String(contentsOf: TestPaths.packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        #expect(readme.utf8.count <= 10 * 1024, "README.md has \(readme.utf8.count) bytes")
        let firstBlock = try #require(readme.components(separatedBy: "```sh\n").dropFirst().first?.components(separatedBy: "```").first)
        #expect(firstBlock.hasPrefix("Scripts/demo    # install packages, build, serve recorded feeds on loopback, ingest them into demo-data/incidents.sqlite, list them\n"))
        #expect(firstBlock.contains("\nScripts/test    # install packages, build, run every test (CI runs exactly this: .ci/run)\n"))
    }
}
