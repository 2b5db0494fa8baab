@testable import IncidentApp
import IncidentCore
import Testing

@Suite("Command-line parsing")
struct CommandLineTests {
    static let active = Flag("active", help: "Only active.")
    static let limit = ValueOption<Int>("limit", short: "n", placeholder: "count", help: "At most this many.", default: "all",
                                        what: "a whole number") { Int($0) }
    static let source = RepeatingOption<String>("source", placeholder: "name", help: "A source.", what: "a name") { $0 }
    static let leaf = Command(name: "list", abstract: "List things.", options: [active, limit, source], run: { _ in })
    static let root = Command(name: "tool", abstract: "A tool.", subcommands: [leaf])

    func parsed(_ arguments: [String]) throws -> ParsedArguments {
        guard case .run(_, let parsed) = try Self.root.parse(arguments) else {
            Issue.record("expected a run invocation")
            return ParsedArguments()
        }
        return parsed
    }

    func usageError(_ arguments: [String]) -> String? {
        do {
            _ = try Self.root.parse(arguments)
            return nil
        } catch {
            return error.usage.message
        }
    }

    @Test("flags, values in both spellings, short names and repeated options, read through their declarations")
    func values() throws {
        let p = try parsed(["list", "--active", "--limit=5", "--source", "gits", "--source", "its-seoul"])
        #expect(p[Self.active])
        #expect(try p.value(Self.limit) == 5)
        #expect(try p.values(Self.source) == ["gits", "its-seoul"])
        #expect(try parsed(["list", "-n", "7"]).value(Self.limit) == 7)
        #expect(try parsed(["list", "-n7"]).value(Self.limit) == 7)
        #expect(p.commandPath == ["tool", "list"])
        let none = try parsed(["list"])
        #expect(!none[Self.active])
        #expect(try none.value(Self.limit) == nil)
        #expect(try none.values(Self.source).isEmpty)
    }

    @Test("usage errors are one line naming the problem", arguments: [
        (["list", "--bogus"], "unknown option '--bogus'"),
        (["list", "--limit"], "--limit needs a value (count)"),
        (["list", "--active=yes"], "--active takes no value"),
        (["lst"], "unknown command 'lst' (commands: list)"),
        ([], "missing command (commands: list)"),
        (["list", "extra"], "unexpected argument 'extra'"),
    ])
    func errors(arguments: [String], message: String) {
        #expect(usageError(arguments) == message)
    }

    @Test("a near-miss option gets a suggestion")
    func suggestion() {
        #expect(usageError(["list", "--activ"]) == "unknown option '--activ' (did you mean --active?)")
    }

    @Test("--help anywhere shows the selected command's help with defaults")
    func help() throws {
        guard case .help(let text) = try Self.root.parse(["list", "--active", "--help"]) else {
            Issue.record("expected help")
            return
        }
        #expect(text.contains("USAGE: tool list [options]"))
        #expect(text.contains("-n, --limit <count>"))
        #expect(text.contains("At most this many. (default: all)"))
        guard case .help(let rootHelp) = try Self.root.parse(["--help"]) else {
            Issue.record("expected help")
            return
        }
        #expect(rootHelp.contains("COMMANDS:"))
        #expect(rootHelp.contains("list"))
    }

    @Test("--version on the root")
    func version() throws {
        guard case .version = try Self.root.parse(["--version"]) else {
            Issue.record("expected version")
            return
        }
    }

    @Test("typed values fail with the option's name and what it must be")
    func typedValue() throws {
        let p = try parsed(["list", "--limit", "many"])
        #expect(throws: UsageError("--limit: 'many' is not a whole number")) { try p.value(Self.limit) }
        #expect(throws: UsageError("--limit: too many")) {
            try parsed(["list", "--limit", "9"]).value(Self.limit, { _ in throw UsageError("too many") })
        }
        #expect(throws: UsageError("missing --limit (a count)")) { try parsed(["list"]).required(Self.limit, "a count") }
    }

    @Test("a choice option takes the raw values of its cases")
    func choice() throws {
        let format = ValueOption<TableOrJSON>(choice: "format", help: "Output format.")
        let command = Command(name: "x", abstract: "X.", options: [format], run: { _ in })
        guard case .run(_, let p) = try command.parse(["--format", "json"]),
              case .run(_, let bad) = try command.parse(["--format", "xml"]) else {
            Issue.record("expected run invocations")
            return
        }
        #expect(try p.value(format) == .json)
        #expect(throws: UsageError("--format: 'xml' is not one of table, json")) { try bad.value(format) }
    }

    @Test("durations", arguments: [("90s", 90), ("15m", 900), ("2h", 7200), ("7d", 604_800)])
    func durations(text: String, seconds: Int64) throws {
        #expect(try ValueParsers.duration(text) == seconds)
        #expect(ValueParsers.durationText(seconds) == text || seconds == 90)
    }

    @Test("bad durations are usage errors", arguments: ["", "5", "m", "-5m", "0s", "1.5h", "5 m", "10w", "+5m", "1e3s", "٣m", "0x10s"])
    func badDurations(text: String) {
        #expect(throws: UsageError.self) { try ValueParsers.duration(text) }
    }

    /// Swift's Double reads hexadecimal ("0x10" is 16), "nan" and "inf": coordinates are decimal.
    @Test("--near and --bbox take decimal numbers only", arguments: ["0x10,127", "37.5,0x7F", "nan,127", "37,inf", "1e1,127", " 37.5 , 127 "])
    func decimalCoordinates(text: String) throws {
        if text.contains("x") || text.contains("n") {
            #expect(throws: FilterValueError("'\(text)' is not LAT,LON (e.g. 37.2636,127.0286)")) { try FilterValues.point(text) }
        } else {
            #expect(try FilterValues.point(text).latitude == Double(text.split(separator: ",")[0].trimmingCharacters(in: .whitespaces)))
        }
        #expect(throws: FilterValueError.self) { try FilterValues.boundingBox("0x1,2,3,4") }
    }

    /// Durations are added to instants (retention, --older-than, an --as-of or --since "ago"):
    /// past a century the instant could not be written, so longer ones are refused by name.
    @Test("durations longer than 100 years are refused, saying so; 36500d is the longest", arguments: [
        "36501d", "876001h", "1000000d", "106751991167d", "99999999999999999999d", "3153600001s",
    ])
    func tooLong(text: String) throws {
        #expect(throws: UsageError("'\(text)' is too long: at most 36500d (100 years)")) { try ValueParsers.duration(text) }
        #expect(throws: UsageError("'\(text)' is too long: at most 36500d (100 years)")) {
            try ValueParsers.instant(text, now: UTCInstant(secondsSince1970: 1_800_000_000), zone: .utc)
        }
        #expect(try ValueParsers.duration("36500d") == 36_500 * 86_400)
    }
}

@Suite("Text tables and logfmt")
struct FormattingTests {
    @Test("control characters from feed data cannot reach the terminal")
    func controlCharacters() {
        #expect(TextTable.singleLine("a\u{1B}[31mred\u{7}\r\nb\u{9B}c\u{0}") == "a [31mred   b c ")
        #expect(TextTable.singleLine("강변북로") == "강변북로")
    }

    @Test("Korean text takes two columns and columns line up")
    func wideCharacters() {
        #expect(TextTable.displayWidth("강변북로") == 8)
        #expect(TextTable.displayWidth("abc") == 3)
        let out = TextTable.render([["ROAD", "X"], ["강변북로", "1"], ["A1", "2"]], maxWidth: 80)
        let lines = out.split(separator: "\n").map(String.init)
        #expect(lines == ["ROAD      X", "강변북로  1", "A1        2"])
    }

    @Test("tables shrink the widest column with an ellipsis to fit the width")
    func truncation() {
        let out = TextTable.render([["ID", "DESCRIPTION"], ["1", "[차량고장] 강변북로 (구리방향) 잠실대교 → 잠실철교"]], maxWidth: 24)
        let line = out.split(separator: "\n").map(String.init)[1]
        #expect(TextTable.displayWidth(line) <= 24)
        #expect(line.hasSuffix("…"))
        #expect(line.hasPrefix("1   [차량고장]"))
    }

    @Test("logfmt quotes values that need it")
    func logfmt() {
        #expect(Logger.logfmtValue("gits") == "gits")
        #expect(Logger.logfmtValue("two words") == "\"two words\"")
        #expect(Logger.logfmtValue("a=\"b\"\n") == "\"a=\\\"b\\\"\\n\"")
        #expect(Logger.logfmtValue("") == "\"\"")
    }
}
