import IncidentCore

/// A small command-line parser in the shape of swift-argument-parser: a root command with
/// nested subcommands, typed options with defaults shown in `--help`, validation before running,
/// `--version`, and usage errors as one line plus a hint (exit 64, `EX_USAGE` of sysexits.h).
///
/// Commands are values (``Command``), not property wrappers: each declares its options, and its
/// `run` receives the parsed values (``ParsedArguments``), converts them to typed settings
/// (throwing ``UsageError`` on a bad value: the "validate" step), then does its work.

/// A named option or flag of a command.
struct Option: Sendable {
    enum Kind: Sendable, Equatable {
        /// `--name` alone; present or not.
        case flag
        /// `--name VALUE` or `--name=VALUE`; the last occurrence wins.
        case value(placeholder: String)
        /// `--name VALUE`, repeatable; all values kept in order.
        case repeating(placeholder: String)
    }

    var name: String
    var short: Character?
    var kind: Kind
    var help: String
    /// Shown in `--help` as `(default: …)`.
    var defaultDescription: String?

    static func flag(_ name: String, short: Character? = nil, help: String) -> Option {
        Option(name: name, short: short, kind: .flag, help: help)
    }

    static func value(_ name: String, short: Character? = nil, placeholder: String, help: String,
                      default defaultDescription: String? = nil) -> Option {
        Option(name: name, short: short, kind: .value(placeholder: placeholder), help: help,
               defaultDescription: defaultDescription)
    }

    static func repeating(_ name: String, placeholder: String, help: String) -> Option {
        Option(name: name, short: nil, kind: .repeating(placeholder: placeholder), help: help)
    }
}

/// A positional argument.
struct Positional: Sendable {
    var name: String
    var help: String
    var isOptional: Bool

    init(_ name: String, help: String, optional: Bool = false) {
        self.name = name
        self.help = help
        self.isOptional = optional
    }
}

/// An option declared once and read through its declaration, so a misspelt name does not
/// compile: `arguments[RunCommand.once]`, `try arguments.value(CommonOptions.database)`.
protocol OptionDeclaration: Sendable {
    /// The option as the parser and `--help` see it.
    var option: Option { get }
}

extension Option: OptionDeclaration {
    var option: Option { self }
}

/// A flag: present or not.
struct Flag: OptionDeclaration {
    let option: Option

    init(_ name: String, short: Character? = nil, help: String) {
        option = .flag(name, short: short, help: help)
    }
}

/// An option with a value, and how its text becomes a `Value`.
struct ValueOption<Value: Sendable>: OptionDeclaration {
    let option: Option
    /// What a value must be, for "'x' is not a duration".
    let what: String
    /// The value of the text, nil when it is not one (or a ``UsageError`` saying why).
    let convert: @Sendable (String) throws -> Value?

    init(_ name: String, short: Character? = nil, placeholder: String, help: String, default defaultDescription: String? = nil,
         what: String, convert: @escaping @Sendable (String) throws -> Value?) {
        option = .value(name, short: short, placeholder: placeholder, help: help, default: defaultDescription)
        self.what = what
        self.convert = convert
    }
}

extension ValueOption where Value == String {
    /// An option whose value is any non-empty text, trimmed.
    init(_ name: String, short: Character? = nil, placeholder: String, help: String, default defaultDescription: String? = nil) {
        self.init(name, short: short, placeholder: placeholder, help: help, default: defaultDescription, what: "a text") { $0.nonEmptyTrimmed }
    }
}

extension ValueOption where Value: RawRepresentable & CaseIterable, Value.RawValue == String {
    /// An option whose value is one of the cases of `Value`, spelled as their raw values.
    init(choice name: String, help: String, default defaultDescription: String? = nil) {
        let names = Value.allCases.map(\.rawValue)
        self.init(name, placeholder: names.joined(separator: "|"), help: help, default: defaultDescription,
                  what: "one of \(names.joined(separator: ", "))") { Value(rawValue: $0) }
    }
}

/// A repeatable option; every value is kept, in order.
struct RepeatingOption<Value: Sendable>: OptionDeclaration {
    let option: Option
    let what: String
    let convert: @Sendable (String) throws -> Value?

    init(_ name: String, placeholder: String, help: String, what: String,
         convert: @escaping @Sendable (String) throws -> Value?) {
        option = .repeating(name, placeholder: placeholder, help: help)
        self.what = what
        self.convert = convert
    }
}

/// The values given on the command line for one command, read through their declarations.
struct ParsedArguments: Sendable {
    /// Every option occurrence by name (without dashes), in order.
    var values: [String: [String]] = [:]
    var flags: Set<String> = []
    var positionals: [String] = []
    /// The command path, e.g. `["incidents", "list"]`, for messages.
    var commandPath: [String] = []

    init() {}

    /// Whether the flag was given.
    subscript(flag: Flag) -> Bool { flags.contains(flag.option.name) }

    /// The last value given for `option`, converted; nil when absent.
    /// - Throws: ``UsageError`` naming the option when the text is not a value.
    func value<Value>(_ option: ValueOption<Value>) throws -> Value? {
        guard let text = values[option.option.name]?.last else { return nil }
        return try Self.convert(text, name: option.option.name, what: option.what, option.convert)
    }

    /// The value of `option` passed through `transform` (which may need other settings, such as
    /// the time zone to read a local time in); nil when absent.
    /// - Throws: ``UsageError`` naming the option when either step fails.
    func value<Value, Result>(_ option: ValueOption<Value>, _ transform: (Value) throws -> Result) throws -> Result? {
        guard let value = try value(option) else { return nil }
        do {
            return try transform(value)
        } catch let error as UsageError {
            throw UsageError("--\(option.option.name): \(error.message)")
        }
    }

    /// The value of an option the command cannot run without.
    /// - Throws: ``UsageError`` `missing --NAME (what)` when absent.
    func required<Value>(_ option: ValueOption<Value>, _ what: String) throws -> Value {
        guard let value = try value(option) else { throw UsageError("missing --\(option.option.name) (\(what))") }
        return value
    }

    /// Every value given for `option`, converted, in order.
    func values<Value>(_ option: RepeatingOption<Value>) throws -> [Value] {
        try (values[option.option.name] ?? []).map { try Self.convert($0, name: option.option.name, what: option.what, option.convert) }
    }

    private static func convert<Value>(_ text: String, name: String, what: String,
                                       _ convert: (String) throws -> Value?) throws -> Value {
        do {
            if let converted = try convert(text) { return converted }
        } catch let error as UsageError {
            throw UsageError("--\(name): \(error.message)")
        }
        throw UsageError("--\(name): '\(text)' is not \(what)")
    }
}

/// A usage mistake: one line for the user; the tool adds a hint and exits 64.
struct UsageError: Error, Equatable, Sendable, CustomStringConvertible {
    var message: String
    init(_ message: String) { self.message = message }
    var description: String { message }
}

/// One command: its help text, options, positionals, and either subcommands or a `run`.
public struct Command: Sendable {
    var name: String
    var abstract: String
    var discussion: String?
    var options: [Option]
    var positionals: [Positional]
    var subcommands: [Command]
    /// Left out of `--help`, the man page and the completions (the generators of those).
    var isHidden = false
    /// Runs the command. Returning is success (exit 0); every other ending is a typed error
    /// (``UsageError`` for a bad value, the error of what failed otherwise), turned into the
    /// exit status and message in one place (``Failure/init(_:)``).
    var run: (@Sendable (ParsedArguments) async throws -> Void)?
    /// Whether SIGINT and SIGTERM cancel `run` (``ProcessSignals/cancelOnSignal()``; a thread
    /// waits for them while it runs). False for a read that never suspends and holds no write
    /// transaction, with nothing to cancel or roll back: the first signal ends it at once (130,
    /// 143), removing a half-written `--output`, and no thread is started (issue 23, "start fast").
    var cancellable = true

    init(name: String, abstract: String, discussion: String? = nil, options: [any OptionDeclaration] = [],
         positionals: [Positional] = [], subcommands: [Command] = [], hidden: Bool = false, cancellable: Bool = true,
         run: (@Sendable (ParsedArguments) async throws -> Void)? = nil) {
        self.isHidden = hidden
        self.cancellable = cancellable
        self.name = name
        self.abstract = abstract
        self.discussion = discussion
        self.options = options.map(\.option)
        self.positionals = positionals
        self.subcommands = subcommands
        self.run = run
    }
}

/// What the command line asked for.
enum Invocation: Sendable {
    case run(Command, ParsedArguments)
    case help(String)
    case version
}

extension Command {
    /// Resolves subcommands and parses the options of the command selected.
    ///
    /// - Parameter arguments: without the program name.
    /// - Throws: ``UsageError`` (with the command path for the hint).
    func parse(_ arguments: [String]) throws(CommandLineError) -> Invocation {
        var command = self
        var path = [name]
        var rest = arguments[...]
        // Walk down the subcommands named at the front; `help A B` is `A B --help`.
        var helpAsked = false
        while let next = rest.first, !command.subcommands.isEmpty {
            if next == "--help" || next == "-h" { return .help(command.helpText(path: path)) }
            if next == "help" && !helpAsked {
                helpAsked = true
                rest = rest.dropFirst()
                continue
            }
            if next == "--version" && path.count == 1 && !helpAsked { return .version }
            guard let sub = command.subcommands.first(where: { $0.name == next }) else {
                let what = next.hasPrefix("-") ? "unknown option '\(next)'" : "unknown command '\(next)'"
                throw CommandLineError(UsageError("\(what) (commands: \(command.visibleCommandNames))"), path: path)
            }
            command = sub
            path.append(sub.name)
            rest = rest.dropFirst()
        }
        if helpAsked {
            guard rest.isEmpty else {
                throw CommandLineError(UsageError("\(path.joined(separator: " ")) has no command '\(rest[rest.startIndex])'"), path: path)
            }
            return .help(command.helpText(path: path))
        }
        if !command.subcommands.isEmpty && command.run == nil {
            throw CommandLineError(UsageError("missing command (commands: \(command.visibleCommandNames))"), path: path)
        }
        var parsed = ParsedArguments()
        parsed.commandPath = path
        var onlyPositionals = false
        while let argument = rest.popFirst() {
            if onlyPositionals || argument == "-" || !argument.hasPrefix("-") {
                parsed.positionals.append(argument)
                continue
            }
            if argument == "--" { onlyPositionals = true; continue }
            if argument == "--help" || argument == "-h" { return .help(command.helpText(path: path)) }
            if argument == "--version" && path.count == 1 { return .version }
            var name: String
            var inlineValue: String?
            if argument.hasPrefix("--") {
                name = String(argument.dropFirst(2))
                if let equals = name.firstIndex(of: "=") {
                    inlineValue = String(name[name.index(after: equals)...])
                    name = String(name[..<equals])
                }
            } else {
                // `-n 5`, or `-n5` for an option that takes a value.
                let short = argument[argument.index(after: argument.startIndex)]
                guard let option = command.options.first(where: { $0.short == short }),
                      argument.count == 2 || option.kind != .flag else {
                    throw CommandLineError(UsageError("unknown option '\(argument)'"), path: path)
                }
                name = option.name
                if argument.count > 2 { inlineValue = String(argument.dropFirst(2)) }
            }
            guard let option = command.options.first(where: { $0.name == name }) else {
                throw CommandLineError(UsageError("unknown option '--\(name)'\(command.suggestion(for: name))"), path: path)
            }
            switch option.kind {
            case .flag:
                guard inlineValue == nil else {
                    throw CommandLineError(UsageError("--\(name) takes no value"), path: path)
                }
                parsed.flags.insert(name)
            case .value(let placeholder), .repeating(let placeholder):
                guard let value = inlineValue ?? rest.popFirst() else {
                    throw CommandLineError(UsageError("--\(name) needs a value (\(placeholder))"), path: path)
                }
                parsed.values[name, default: []].append(value)
            }
        }
        let required = command.positionals.filter { !$0.isOptional }.count
        if parsed.positionals.count < required {
            let missing = command.positionals[parsed.positionals.count].name
            throw CommandLineError(UsageError("missing argument \(missing)"), path: path)
        }
        if parsed.positionals.count > command.positionals.count {
            throw CommandLineError(UsageError("unexpected argument '\(parsed.positionals[command.positionals.count])'"), path: path)
        }
        return .run(command, parsed)
    }

    /// The subcommands people are told about, comma-separated.
    var visibleCommandNames: String {
        subcommands.filter { !$0.isHidden }.map(\.name).joined(separator: ", ")
    }

    private func suggestion(for name: String) -> String {
        let close = options.map(\.name).filter { $0.hasPrefix(String(name.prefix(3))) }
        return close.isEmpty ? "" : " (did you mean --\(close[0])?)"
    }

    /// The `--help` text: usage line, abstract, discussion, options with defaults, subcommands.
    func helpText(path: [String]) -> String {
        var lines: [String] = []
        lines.append("OVERVIEW: \(abstract)")
        if let discussion { lines.append(""); lines.append(discussion) }
        lines.append("")
        var usage = "USAGE: " + path.joined(separator: " ")
        if !subcommands.isEmpty { usage += " <command>" }
        if !options.isEmpty { usage += " [options]" }
        for positional in positionals { usage += positional.isOptional ? " [<\(positional.name)>]" : " <\(positional.name)>" }
        lines.append(usage)
        if !positionals.isEmpty {
            lines.append("")
            lines.append("ARGUMENTS:")
            for positional in positionals { lines.append(Self.row("<\(positional.name)>", positional.help)) }
        }
        lines.append("")
        lines.append("OPTIONS:")
        for option in options {
            var left = "--\(option.name)"
            if let short = option.short { left = "-\(short), " + left }
            switch option.kind {
            case .flag: break
            case .value(let placeholder): left += " <\(placeholder)>"
            case .repeating(let placeholder): left += " <\(placeholder)> ..."
            }
            var help = option.help
            if let defaultDescription = option.defaultDescription { help += " (default: \(defaultDescription))" }
            lines.append(Self.row(left, help))
        }
        if path.count == 1 { lines.append(Self.row("--version", "Show the version.")) }
        lines.append(Self.row("-h, --help", "Show help information."))
        if !subcommands.isEmpty {
            lines.append("")
            lines.append("COMMANDS:")
            for sub in subcommands where !sub.isHidden { lines.append(Self.row(sub.name, sub.abstract)) }
            lines.append("")
            lines.append("  See '\(path.joined(separator: " ")) help <command>' for details.")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func row(_ left: String, _ right: String) -> String {
        let padded = left.count < 30 ? left + String(repeating: " ", count: 30 - left.count) : left + "\n" + String(repeating: " ", count: 32)
        return "  " + padded + right
    }
}

/// A usage error with the command it happened in (for the hint).
struct CommandLineError: Error, Sendable {
    var usage: UsageError
    var path: [String]
    init(_ usage: UsageError, path: [String]) {
        self.usage = usage
        self.path = path
    }
}
