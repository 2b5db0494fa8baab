import Foundation
import IncidentCore
import IncidentFeeds
import IncidentSQLite
import TestSupport
import Testing

/// README.md's tables of provider options and of query filters are generated from their
/// declarations (`FeedProvider.options`, `IncidentFilter.Parameter`); these tests fail when they
/// differ. `UPDATE_README=1` rewrites them.
@Suite("README", .serialized)  // UPDATE_README=1 rewrites one file
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

    /// Checks (or with `UPDATE_README=1` rewrites) README.md's text between the markers `name:begin` and `name:end`.
    static func checkGenerated(_ name: String, _ expected: String) throws {
        let url = TestPaths.packageRoot.appendingPathComponent("README.md")
        let readme = try String(contentsOf: url, encoding: .utf8)
        let begin = "<!-- \(name):begin -->\n", end = "<!-- \(name):end -->"
        let start = try #require(readme.range(of: begin), "README.md has no \(begin)")
        let stop = try #require(readme.range(of: end, range: start.upperBound..<readme.endIndex))
        if ProcessInfo.processInfo.environment["UPDATE_README"] == "1" {
            try (readme[..<start.upperBound] + expected + readme[stop.lowerBound...]).write(to: url, atomically: true, encoding: .utf8)
        } else {
            #expect(String(readme[start.upperBound..<stop.lowerBound]) == expected,
                    "README.md's \(name) table differs from the declarations; run UPDATE_README=1 swift test --filter ReadmeTests")
        }
    }

    @Test("the README's provider option table is the one the declarations give")
    func providerOptions() throws {
        try Self.checkGenerated("provider-options", Self.providerOptionsTable())
    }

    /// Its examples are checked to parse by FilterCatalogueTests.
    @Test("the README's filter table is the catalogue's")
    func filters() throws {
        try Self.checkGenerated("query-filters", Self.filterTable())
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
}
