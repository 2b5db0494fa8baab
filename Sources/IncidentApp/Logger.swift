import Foundation
import IncidentNetworking
import IncidentCore

/// Structured log lines on stderr, one per event: logfmt by default
/// (`ts=… level=info event=ingest.finished source=gits status=succeeded fetched=4`),
/// JSON lines with `--log-format json`. Every line passes through ``Redaction/redact(_:)``
/// so no API key reaches the log, whatever a message contains.
struct Logger: Sendable {
    enum Format: String, Sendable, CaseIterable {
        case logfmt
        case json
    }

    enum Level: String, Sendable {
        case debug, info, warning, error
    }

    var format: Format
    var verbose: Bool
    var clock: UTCClock
    /// Where finished lines go (stderr in the executables; a buffer in tests).
    var write: @Sendable (String) -> Void

    init(format: Format = .logfmt, verbose: Bool = false, clock: UTCClock,
         write: @escaping @Sendable (String) -> Void = StandardError.writeLine) {
        self.format = format
        self.verbose = verbose
        self.clock = clock
        self.write = write
    }

    /// Logs `event` with `fields` in the given order. `debug` lines appear only with `--verbose`.
    func log(_ level: Level, _ event: String, _ fields: KeyValuePairs<String, (any CustomStringConvertible)?> = [:]) {
        if level == .debug && !verbose { return }
        var pairs: [(String, String)] = [("ts", clock.now().rfc3339), ("level", level.rawValue), ("event", event)]
        // Each value is redacted as raw text, before quoting could change how a key is spelled;
        // names, time and level are this program's own.
        for (key, value) in fields {
            if let value { pairs.append((key, Redaction.redact(String(describing: value)))) }
        }
        write(render(pairs))
    }

    func render(_ pairs: [(String, String)]) -> String {
        switch format {
        case .logfmt:
            return pairs.map { "\($0.0)=\(Self.logfmtValue($0.1))" }.joined(separator: " ")
        case .json:
            return "{" + pairs.map { "\(JSONText.quoted($0.0)):\(JSONText.quoted($0.1))" }.joined(separator: ",") + "}"
        }
    }

    /// Bare when the value has no space, quote, `=` or control character; otherwise a quoted
    /// string with JSON's escapes (`\"`, `\\`, `\n`, `\u0001`), the convention of go-logfmt.
    static func logfmtValue(_ value: String) -> String {
        let needsQuotes = value.isEmpty || value.unicodeScalars.contains {
            $0 == " " || $0 == "=" || $0 == "\"" || $0 == "\\" || $0.value < 0x20 || $0.value == 0x7F
        }
        return needsQuotes ? JSONText.quoted(value) : value
    }
}

/// JSON string literals (RFC 8259 §7), for hand-written JSON lines and output formats.
enum JSONText {
    static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    out += String(format: "\\u%04x", scalar.value)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }

    /// A JSON array of already-rendered values, one per line.
    static func array(_ elements: [String]) -> String {
        elements.isEmpty ? "[]\n" : "[\n" + elements.map { "  " + $0 }.joined(separator: ",\n") + "\n]\n"
    }
}
