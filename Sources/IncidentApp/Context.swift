import Foundation
import IncidentCore
import IncidentFeeds
import IncidentNetworking

/// What a command needs from the process: environment, clock, output. Tests build their own.
public struct Context: Sendable {
    public var environment: [String: String]
    public var clock: UTCClock
    /// Writes data (the command's result) to stdout.
    public var output: @Sendable (String) -> Void
    /// Writes UTF-8 bytes to the same stdout as ``output``, without making a String of them
    /// (an export of every row writes hundreds of MB); nil in tests that capture ``output``,
    /// where ``StandardOutputSink`` hands the bytes to it as text.
    var outputBytes: (@Sendable ([UInt8]) -> Void)?
    /// This machine's name (gethostname(2)), recorded with each run; nil in tests.
    var host: String?
    /// stderr is the systemd journal: log lines carry `<N>` priority prefixes (``JournalStream``).
    var stderrIsJournal = false
    /// The configuration file used without `--config` when it exists (a server program's
    /// default: the units and the crontab name it too); tests point it elsewhere.
    var defaultConfigurationFile = Context.systemConfigurationFile

    /// `/etc/trafficincidents/config.json`.
    static let systemConfigurationFile = "/etc/trafficincidents/config.json"

    /// stdout is a terminal a person reads (`list` then shows a page); false in tests that
    /// capture the output in the process.
    var outputIsTerminal = false

    public init(environment: [String: String], clock: UTCClock, output: @escaping @Sendable (String) -> Void) {
        self.environment = environment
        self.clock = clock
        self.output = output
    }

    /// The real process: its environment, the system clock, stdout.
    public static func live() -> Context {
        // Key values are hidden in every text from the start, not only once a request is built.
        ProviderRegistry.registerKeyParameterNames()
        var context = Context(environment: processEnvironment(), clock: .system, output: { text in
            var text = text
            text.withUTF8 { StandardOutput.write(UnsafeRawBufferPointer($0)) }
        })
        context.outputBytes = { bytes in bytes.withUnsafeBytes(StandardOutput.write) }
        context.stderrIsJournal = JournalStream.isStandardError(context.environment)
        context.outputIsTerminal = isatty(STDOUT_FILENO) == 1
        context.registerSecrets()
        var name = [CChar](repeating: 0, count: 256)
        if gethostname(&name, name.count - 1) == 0 {
            context.host = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        return context
    }

    /// The process's environment, `NAME=value` entries of `environ` split at the first `=` (an
    /// entry without one is left out; of two with the same name the first counts, as with getenv(3)).
    /// Read straight from the bytes: `ProcessInfo.processInfo.environment` took about 0.7 million
    /// instructions a call (it compares Characters), a tenth of a short query's own start.
    static func processEnvironment() -> [String: String] {
        // NULL after clearenv(3), though Swift imports it as never nil.
        let start: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = environ
        guard var entry = start else { return [:] }
        var count = 0
        while entry[count] != nil { count += 1 }
        var environment = [String: String](minimumCapacity: count)  // no rehashing while it fills
        while let text = entry.pointee {
            let length = strlen(text)
            text.withMemoryRebound(to: UInt8.self, capacity: length) { bytes in
                let buffer = UnsafeBufferPointer(start: bytes, count: length)
                guard let equals = buffer.firstIndex(of: UInt8(ascii: "=")) else { return }
                let name = String(decoding: buffer[..<equals], as: UTF8.self)
                if environment[name] == nil {
                    environment[name] = String(decoding: buffer[(equals + 1)...], as: UTF8.self)
                }
            }
            entry += 1
        }
        return environment
    }

    /// The configuration file: `--config FILE`, else ``defaultConfigurationFile``
    /// (`/etc/trafficincidents/config.json`) when it exists, else nil (no configuration).
    /// Every command of both executables resolves it here, and only here.
    func configurationFile(_ arguments: ParsedArguments) throws -> String? {
        if let path = try arguments.value(CommonOptions.config) { return path }
        return FileManager.default.fileExists(atPath: defaultConfigurationFile) ? defaultConfigurationFile : nil
    }

    /// The database path, the first of:
    /// 1. `--database PATH`, which must name the configuration's database when the
    ///    configuration has one: where the data goes is said in one place (issue 20: units
    ///    passing `--database …sqlite` kept writing SQLite after the configuration moved to
    ///    PostgreSQL);
    /// 2. the configuration's `database` (`configured`, when the command has loaded the
    ///    configuration, else read from ``configurationFile(_:)``): a file named on the command
    ///    line says more about this run than the environment does;
    /// 3. `$INCIDENTS_DATABASE`;
    /// 4. `$XDG_DATA_HOME/trafficincidents/incidents.sqlite` (XDG_DATA_HOME defaulting to
    ///    `~/.local/share`).
    ///
    /// Every command of both executables resolves it here, and only here.
    /// A PostgreSQL connection string is checked here (``Stores/checkSetting(_:)``).
    /// - Throws: ``UsageError`` for an empty `--database`; ``ConfigurationError`` for an
    ///   unreadable configuration, a `--database` that names another database than the
    ///   configuration's, or a connection string that holds a password or that libpq cannot read.
    func databasePath(_ arguments: ParsedArguments, configured: String? = nil) throws -> String {
        let path = try chosenDatabase(arguments, configured: configured)
        try Stores.checkSetting(path)
        return path
    }

    private func chosenDatabase(_ arguments: ParsedArguments, configured: String?) throws -> String {
        var setting = configured.flatMap { $0.isEmpty ? nil : $0 }
        let file = try configurationFile(arguments)
        if setting == nil, let file { setting = try Configuration.databaseSetting(in: file).flatMap { $0.isEmpty ? nil : $0 } }
        if let option = try arguments.value(CommonOptions.database) {
            if let setting, !Stores.sameDatabase(option, setting) {
                try Stores.checkSetting(option)
                try Stores.checkSetting(setting)
                throw ConfigurationError("--database \(Stores.displayName(option)) is not the configuration's database "
                    + "\(Stores.displayName(setting)) (\(file ?? "configuration")); say where the data goes in one place: "
                    + "remove --database, or change the configuration's \"database\"")
            }
            return option
        }
        if let setting { return setting }
        if let variable = environment["INCIDENTS_DATABASE"], !variable.isEmpty { return variable }
        return Self.defaultDatabasePath(environment)
    }

    static func defaultDatabasePath(_ environment: [String: String]) -> String {
        let dataHome = environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? ((environment["HOME"] ?? NSHomeDirectory()) + "/.local/share")
        return dataHome + "/trafficincidents/incidents.sqlite"
    }
}

extension UTCClock {
    /// The system clock, to the second.
    static let system = UTCClock {
        UTCInstant(secondsSince1970: Int64(Date().timeIntervalSince1970.rounded(.down)))
    }
}

extension Context {
    /// Registers with `Redaction` the secrets the environment itself holds, before any
    /// configuration is read: PostgreSQL's password (`PGPASSWORD`) and the key of the GITS
    /// source configured without `--config` (`GITS_SERVICE_KEY`), which a command that reads no
    /// configuration (`ingest --file` without `--config`) would otherwise never hide from its
    /// log, its run record or the text it stores.
    func registerSecrets() {
        if let password = environment["PGPASSWORD"], !password.isEmpty { Redaction.register(secret: password) }
        if let key = environment["GITS_SERVICE_KEY"], !key.isEmpty { _ = APIKey(key) }
    }
}

/// Standard output written with write(2). When it cannot be written (a full disk, a closed
/// terminal) the process ends with one line on standard error and exit status 1; Foundation's
/// non-throwing `FileHandle.write` crashed instead (a forced try inside Foundation: a backtrace, exit 132).
enum StandardOutput {
    static func write(_ bytes: UnsafeRawBufferPointer) {
        guard var next = bytes.baseAddress else { return }
        var left = bytes.count
        while left > 0 {
            let written = Glibc.write(STDOUT_FILENO, next, left)
            if written > 0 {
                next += written
                left -= written
            } else if written < 0 && errno == EINTR {
                continue
            } else {
                let reason = written < 0 ? String(cString: strerror(errno)) : "nothing was written"
                let line = "error: cannot write to standard output: \(reason)\n"
                _ = line.withCString { Glibc.write(STDERR_FILENO, $0, strlen($0)) }
                exit(ExitStatus.failure)
            }
        }
    }
}
