import Foundation
import IncidentNetworking
import IncidentCore
import IncidentJSON

/// Structured log lines on stderr, one per event: logfmt by default
/// (`ts=… level=info event=ingest.finished source=gits status=succeeded fetched=4`),
/// JSON lines with `--log-format json`. Every text value passes through ``Redaction/redact(_:)``
/// so no API key reaches the log, whatever a message contains. Integers and fractional numbers
/// (durations are seconds, e.g. `duration_s=0.042`) are written as numbers: bare in logfmt,
/// JSON numbers in JSON lines.
///
/// When stderr is the systemd journal (``JournalStream``), each line starts with its syslog
/// priority, `<3>` for error, `<4>` warning, `<6>` info, `<7>` debug (sd-daemon(3)), which
/// journald strips and records, so `journalctl -p warning` shows warnings and errors only.
struct Logger: Sendable {
    enum Format: String, Sendable, CaseIterable {
        case logfmt
        case json
    }

    enum Level: String, Sendable, CaseIterable, Comparable {
        case debug, info, warning, error

        /// Less severe first: debug < info < warning < error.
        static func < (a: Level, b: Level) -> Bool { allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)! }

        /// The syslog(3) priority: LOG_ERR 3, LOG_WARNING 4, LOG_INFO 6, LOG_DEBUG 7.
        var syslogPriority: Int {
            switch self {
            case .error: 3
            case .warning: 4
            case .info: 6
            case .debug: 7
            }
        }
    }

    /// One value of a line: text (quoted when needed) or a number (never quoted).
    enum Value: Equatable {
        case text(String)
        case number(String)
    }

    var format: Format
    var verbose: Bool
    /// Lines below this level are left out (`--log-level`; debug lines need `--verbose` too,
    /// or `--log-level debug`).
    var minimumLevel: Level = .info
    var clock: UTCClock
    /// Prefix each line with `<N>`, its syslog priority (stderr is the journal).
    var syslogPriorities: Bool
    /// Where finished lines go (stderr in the executables; a buffer in tests).
    var write: @Sendable (String) -> Void

    init(format: Format = .logfmt, verbose: Bool = false, clock: UTCClock, syslogPriorities: Bool = false,
         write: @escaping @Sendable (String) -> Void = StandardError.writeLine) {
        self.format = format
        self.verbose = verbose
        self.clock = clock
        self.syslogPriorities = syslogPriorities
        self.write = write
    }

    /// Logs `event` with `fields` in the given order; nil values are left out. `debug` lines
    /// appear only with `--verbose`.
    func log(_ level: Level, _ event: String, _ fields: KeyValuePairs<String, (any CustomStringConvertible)?> = [:]) {
        if level == .debug ? !(verbose || minimumLevel == .debug) : level < minimumLevel { return }
        var pairs: [(String, Value)] = []
        for (key, value) in fields {
            if let value { pairs.append((key, Self.value(value))) }
        }
        write(line(level, event, pairs))
    }

    /// The line of `event` at `level` (whatever the minimum level), now: its time, level and
    /// event, then `pairs` as they are (not redacted: for values known to hold no secret).
    func line(_ level: Level, _ event: String, _ pairs: [(String, Value)]) -> String {
        (syslogPriorities ? "<\(level.syslogPriority)>" : "")
            + render([("ts", .text(clock.now().rfc3339)), ("level", .text(level.rawValue)), ("event", .text(event))] + pairs)
    }

    /// Integers and finite doubles are numbers (doubles to the millisecond: `0.042`); anything
    /// else is its description, redacted as raw text, before quoting could change how a key is
    /// spelled.
    static func value(_ value: any CustomStringConvertible) -> Value {
        switch value {
        case let integer as any BinaryInteger: .number(String(describing: integer))
        case let double as Double where double.isFinite: .number(String(describing: (double * 1000).rounded() / 1000))
        default: .text(Redaction.redact(String(describing: value)))
        }
    }

    func render(_ pairs: [(String, Value)]) -> String {
        switch format {
        case .logfmt:
            return pairs.map { key, value in
                switch value {
                case .text(let text): "\(key)=\(Self.logfmtValue(text))"
                case .number(let number): "\(key)=\(number)"
                }
            }.joined(separator: " ")
        case .json:
            return "{" + pairs.map { key, value in
                switch value {
                case .text(let text): "\(JSONString.quoted(key)):\(JSONString.quoted(text))"
                case .number(let number): "\(JSONString.quoted(key)):\(number)"
                }
            }.joined(separator: ",") + "}"
        }
    }

    /// Bare when the value has no space, quote, `=` or control character; otherwise a quoted
    /// string with JSON's escapes (`\"`, `\\`, `\n`, `\u0001`), the convention of go-logfmt.
    static func logfmtValue(_ value: String) -> String {
        let needsQuotes = value.isEmpty || value.unicodeScalars.contains {
            $0 == " " || $0 == "=" || JSONString.escapes($0.value)
        }
        return needsQuotes ? JSONString.quoted(value) : value
    }
}

/// Hand-written JSON output (strings: ``JSONString``).
enum JSONText {
    /// A JSON array of already-rendered values, one per line.
    static func array(_ elements: [String]) -> String {
        elements.isEmpty ? "[]\n" : "[\n" + elements.map { "  " + $0 }.joined(separator: ",\n") + "\n]\n"
    }
}

/// Whether stderr is connected to the systemd journal. systemd sets `JOURNAL_STREAM` to
/// `DEVICE:INODE` of the stream it connected stdout/stderr to; as systemd.exec(5) advises, the
/// variable counts only when those match stderr's own (`fstat(2)`), so a program whose stderr a
/// service redirected elsewhere (a file, a pipe) does not write priority prefixes there.
enum JournalStream {
    static func isStandardError(_ environment: [String: String]) -> Bool {
        guard let value = environment["JOURNAL_STREAM"] else { return false }
        let parts = value.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        var status = stat()
        guard fstat(STDERR_FILENO, &status) == 0 else { return false }
        return UInt64(status.st_dev) == device && UInt64(status.st_ino) == inode
    }
}
