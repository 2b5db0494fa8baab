import Foundation
import IncidentNetworking

/// An environment file (`--env-file FILE`, `/etc/trafficincidents/keys.env`): the variables
/// that hold API keys (and PGPASSWORD), read by the binary itself, so that a cron line needs no
/// shell sourcing and fails with a message in the log rather than before the program starts
/// (issue 20: a root-only `keys.env` made `. keys.env` fail in cron's shell, logging nothing).
///
/// The format is the common subset of POSIX sh and systemd's `EnvironmentFile=`, so the one
/// file means the same to all three: one `NAME=value` per line (sh's `export ` before it is
/// accepted too); blank lines and lines starting with `#` are ignored; a value is either bare (no spaces,
/// quotes, `$`, `` ` `` or `\`) or wholly in single quotes (taken literally) or double quotes
/// (without `$`, `` ` `` or `\`, which sh would expand). Values are never shown in errors.
enum EnvironmentFile {
    /// Whether `name` is an environment variable's name as a shell writes it: letters, digits
    /// and `_`, not starting with a digit (POSIX.1-2017, 8.1).
    static func isVariableName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, first == "_" || (first.isASCII && first.properties.isAlphabetic) else { return false }
        return name.unicodeScalars.allSatisfy { $0 == "_" || ($0.isASCII && $0.properties.isAlphabetic) || ("0"..."9").contains($0) }
    }

    /// The file's variables, in order.
    /// - Throws: ``ConfigurationError`` (exit 78) naming the file: missing, unreadable (with the
    ///   system's reason), larger than 64 KiB or not UTF-8, or a line that is not `NAME=value`
    ///   (naming the line's number and, when there is one, the variable; never the value).
    static func read(_ path: String) throws -> [(name: String, value: String)] {
        let text: String
        switch FileText.read(path, limit: 64 << 10) {
        case .text(let read): text = read
        case .missing:
            throw ConfigurationError("the environment file \(path) (--env-file) does not exist; create it (docs/operator.md, \"Configure a key and the sources\")")
        case .unreadable(let reason):
            throw ConfigurationError("cannot read the environment file \(path) (--env-file): \(reason); "
                                     + "make it readable by the user that runs this (mode 0640, group trafficincidents)")
        case .notText(let reason):
            throw ConfigurationError("the environment file \(path) (--env-file) \(reason); it holds lines NAME=value")
        }
        var variables: [(name: String, value: String)] = []
        // Lines end with LF or CRLF ("\r\n" is one Character, and a newline).
        for (index, rawLine) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            var line = rawLine.drop { $0 == " " || $0 == "\t" }
            if line.isEmpty || line.hasPrefix("#") { continue }
            if line.hasPrefix("export ") { line = line.dropFirst("export ".count).drop { $0 == " " } }
            func problem(_ text: String) -> ConfigurationError {
                ConfigurationError("the environment file \(path) (--env-file), line \(index + 1): \(text); lines are NAME=value "
                                   + "(a value with spaces or special characters in single quotes)")
            }
            guard let equals = line.firstIndex(of: "=") else { throw problem("no '=' (a value alone is never shown)") }
            let name = String(line[..<equals])
            guard isVariableName(name) else {
                throw problem("'\(name.prefix(40))' is not a variable name (letters, digits and _, not starting with a digit)")
            }
            variables.append((name, try value(line[line.index(after: equals)...], name: name, problem)))
        }
        return variables
    }

    private static func value(_ text: Substring, name: String, _ problem: (String) -> ConfigurationError) throws -> String {
        let trailing = text.reversed().prefix { $0 == " " || $0 == "\t" }.count
        let text = text.dropLast(trailing)
        if let quote = text.first, quote == "'" || quote == "\"" {
            guard text.count >= 2, text.last == quote, !text.dropFirst().dropLast().contains(quote) else {
                throw problem("the value of \(name) opens a quote it does not close at the end of the line")
            }
            let inner = text.dropFirst().dropLast()
            if quote == "\"", inner.contains(where: { "$`\\".contains($0) }) {
                throw problem("the value of \(name) has $, ` or \\ inside double quotes, which a shell would expand; use single quotes")
            }
            return String(inner)
        }
        if text.contains(where: { " \t'\"$`\\;&|<>()".contains($0) }) {
            throw problem("the value of \(name) has a space or a character a shell would read (' \" $ ` \\ ; & | < > ( )); put it in single quotes")
        }
        return String(text)
    }
}

extension Context {
    /// This context with the variables of `--env-file FILE` added (the file's values win over
    /// the process environment: it was named for this run). libpq's variables (`PG…`, such as
    /// PGPASSWORD) are also set in the process, where libpq reads them. Without the option,
    /// the context itself.
    /// - Throws: ``ConfigurationError`` (``EnvironmentFile/read(_:)``).
    func loadingEnvironmentFile(_ arguments: ParsedArguments) throws -> Context {
        guard let path = try arguments.value(CommonOptions.envFile) else { return self }
        var context = self
        for (name, value) in try EnvironmentFile.read(path) {
            context.environment[name] = value
            if name.hasPrefix("PG") { setenv(name, value, 1) }
        }
        context.registerSecrets()
        return context
    }
}
