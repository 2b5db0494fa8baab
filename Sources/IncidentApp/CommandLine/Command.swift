/// A small command-line parser in the shape of swift-argument-parser: a root command with
/// nested subcommands, typed options with defaults shown in `--help`, validation before running,
/// `--version`, and usage errors as one line plus a hint (exit 64, `EX_USAGE` of sysexits.h).
///
/// Commands are values (``Command``), not property wrappers: each declares its options, and its
/// `run` receives the parsed values (``ParsedArguments``), converts them to typed settings
/// (throwing ``UsageError`` on a bad value: the "validate" step), then does its work.

/// A named option or flag of a command.
public struct Option: Sendable {
    public enum Kind: Sendable, Equatable {
        /// `--name` alone; present or not.
        case flag
        /// `--name VALUE` or `--name=VALUE`; the last occurrence wins.
        case value(placeholder: String)
        /// `--name VALUE`, repeatable; all values kept in order.
        case repeating(placeholder: String)
    }

    public var name: String
    public var short: Character?
    public var kind: Kind
    public var help: String
    /// Shown in `--help` as `(default: …)`.
    public var defaultDescription: String?

    public static func flag(_ name: String, short: Character? = nil, help: String) -> Option {
        Option(name: name, short: short, kind: .flag, help: help)
    }

    public static func value(_ name: String, short: Character? = nil, placeholder: String, help: String,
                             default defaultDescription: String? = nil) -> Option {
        Option(name: name, short: short, kind: .value(placeholder: placeholder), help: help,
               defaultDescription: defaultDescription)
    }

    public static func repeating(_ name: String, placeholder: String, help: String) -> Option {
        Option(name: name, short: nil, kind: .repeating(placeholder: placeholder), help: help)
    }
}

/// A positional argument.
public struct Positional: Sendable {
    public var name: String
    public var help: String
    public var isOptional: Bool

    public init(_ name: String, help: String, optional: Bool = false) {
        self.name = name
        self.help = help
        self.isOptional = optional
    }
}

/// The values given on the command line for one command.
public struct ParsedArguments: Sendable {
    /// Every option occurrence by name (without dashes), in order.
    public var values: [String: [String]] = [:]
    public var flags: Set<String> = []
    public var positionals: [String] = []
    /// The command path, e.g. `["incidents", "list"]`, for messages.
    public var commandPath: [String] = []

    public func flag(_ name: String) -> Bool { flags.contains(name) }
    /// The last value given for `name`, or nil.
    public func value(_ name: String) -> String? { values[name]?.last }
    public func all(_ name: String) -> [String] { values[name] ?? [] }

    /// The value of `name` converted by `convert`, or nil when absent.
    /// - Throws: ``UsageError`` naming the option when `convert` fails.
    public func value<T>(_ name: String, as what: String, _ convert: (String) throws -> T?) throws -> T? {
        guard let text = value(name) else { return nil }
        do {
            if let converted = try convert(text) { return converted }
        } catch let error as UsageError {
            throw UsageError("--\(name): \(error.message)")
        }
        throw UsageError("--\(name): '\(text)' is not \(what)")
    }
}

/// A usage mistake: one line for the user; the tool adds a hint and exits 64.
public struct UsageError: Error, Equatable, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// One command: its help text, options, positionals, and either subcommands or a `run`.
public struct Command: Sendable {
    public var name: String
    public var abstract: String
    public var discussion: String?
    public var options: [Option]
    public var positionals: [Positional]
    public var subcommands: [Command]
    /// Runs the command and returns the process exit status. Throw ``UsageError`` for a bad value.
    public var run: (@Sendable (ParsedArguments) async throws -> Int32)?

    public init(name: String, abstract: String, discussion: String? = nil, options: [Option] = [],
                positionals: [Positional] = [], subcommands: [Command] = [],
                run: (@Sendable (ParsedArguments) async throws -> Int32)? = nil) {
        self.name = name
        self.abstract = abstract
        self.discussion = discussion
        self.options = options
        self.positionals = positionals
        self.subcommands = subcommands
        self.run = run
    }
}

/// What the command line asked for.
public enum Invocation: Sendable {
    case run(Command, ParsedArguments)
    case help(String)
    case version
}

extension Command {
    /// Resolves subcommands and parses the options of the command selected.
    ///
    /// - Parameter arguments: without the program name.
    /// - Throws: ``UsageError`` (with the command path for the hint).
    public func parse(_ arguments: [String]) throws(CommandLineError) -> Invocation {
        var command = self
        var path = [name]
        var rest = arguments[...]
        // Walk down the subcommands named at the front.
        while let next = rest.first, !command.subcommands.isEmpty {
            if next == "--help" || next == "-h" || next == "help" { return .help(command.helpText(path: path)) }
            if next == "--version" && path.count == 1 { return .version }
            guard let sub = command.subcommands.first(where: { $0.name == next }) else {
                let known = command.subcommands.map(\.name).joined(separator: ", ")
                let what = next.hasPrefix("-") ? "unknown option '\(next)'" : "unknown command '\(next)'"
                throw CommandLineError(UsageError("\(what) (commands: \(known))"), path: path)
            }
            command = sub
            path.append(sub.name)
            rest = rest.dropFirst()
        }
        if !command.subcommands.isEmpty && command.run == nil {
            throw CommandLineError(UsageError("missing command (commands: \(command.subcommands.map(\.name).joined(separator: ", ")))"),
                                   path: path)
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

    private func suggestion(for name: String) -> String {
        let close = options.map(\.name).filter { $0.hasPrefix(String(name.prefix(3))) }
        return close.isEmpty ? "" : " (did you mean --\(close[0])?)"
    }

    /// The `--help` text: usage line, abstract, discussion, options with defaults, subcommands.
    public func helpText(path: [String]) -> String {
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
            for sub in subcommands { lines.append(Self.row(sub.name, sub.abstract)) }
            lines.append("")
            lines.append("  See '\(path.joined(separator: " ")) <command> --help' for details.")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func row(_ left: String, _ right: String) -> String {
        let padded = left.count < 30 ? left + String(repeating: " ", count: 30 - left.count) : left + "\n" + String(repeating: " ", count: 32)
        return "  " + padded + right
    }
}

/// A usage error with the command it happened in (for the hint).
public struct CommandLineError: Error, Sendable {
    public var usage: UsageError
    public var path: [String]
    public init(_ usage: UsageError, path: [String]) {
        self.usage = usage
        self.path = path
    }
}
