import Foundation
import IncidentFeeds
import TestSupport
import Testing

/// README.md's table of provider options is generated from the providers' declarations
/// (`FeedProvider.options`); this test fails when they differ. `UPDATE_README=1` rewrites it.
@Suite("README")
struct ReadmeTests {
    static let begin = "<!-- provider-options:begin -->\n"
    static let end = "<!-- provider-options:end -->"

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

    @Test("the README's provider option table is the one the declarations give")
    func providerOptions() throws {
        let url = TestPaths.packageRoot.appendingPathComponent("README.md")
        let readme = try String(contentsOf: url, encoding: .utf8)
        let start = try #require(readme.range(of: Self.begin), "README.md has no \(Self.begin)")
        let stop = try #require(readme.range(of: Self.end, range: start.upperBound..<readme.endIndex))
        let expected = Self.providerOptionsTable()
        if ProcessInfo.processInfo.environment["UPDATE_README"] == "1" {
            try (readme[..<start.upperBound] + expected + readme[stop.lowerBound...]).write(to: url, atomically: true, encoding: .utf8)
        } else {
            #expect(String(readme[start.upperBound..<stop.lowerBound]) == expected,
                    "README.md's provider options differ from the declarations; run UPDATE_README=1 swift test --filter ReadmeTests")
        }
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
