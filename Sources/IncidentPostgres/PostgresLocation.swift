internal import CLibPQ

/// Where the PostgreSQL store is: the configuration's `database` value when it is a libpq
/// connection URI (`postgresql://ingest@db.internal:5432/incidents?sslmode=verify-full`) or a
/// keyword/value string (`host=db.internal dbname=incidents user=ingest`)
/// (<https://www.postgresql.org/docs/15/libpq-connect.html#LIBPQ-CONNSTRING>).
///
/// Passwords never live in the configuration: a connection string holding one (`password=`,
/// `user:secret@host`, `sslpassword=`) is refused. libpq reads the password from `PGPASSWORD`,
/// `PGPASSFILE` or `~/.pgpass` itself. ``description`` is the connection string without any
/// option but host, port, database and user: the only form to log or show.
public struct PostgresLocation: Sendable, Equatable, CustomStringConvertible {
    /// The connection string as configured (no password in it).
    let connectionString: String
    /// `postgresql://user@host:port/dbname`, built from the parsed options.
    public let description: String
    /// `host:port/dbname` without the role: connection strings with equal values reach the same
    /// database, perhaps as different roles (a scheduler's writer, an analyst's reader).
    public let database: String

    /// Whether `database` names a PostgreSQL database rather than an SQLite file: a
    /// `postgresql://` or `postgres://` URI, or a string that starts with a libpq keyword and
    /// `=` (`host=…`, `dbname=…`, `service=…`). A plain path (`/var/lib/x.sqlite`,
    /// `:memory:`) is not.
    public static func recognizes(_ database: String) -> Bool {
        let trimmed = database.drop { $0 == " " }
        let lowered = trimmed.prefix(13).lowercased()
        if lowered.hasPrefix("postgresql://") || lowered.hasPrefix("postgres://") { return true }
        guard let equals = trimmed.firstIndex(of: "=") else { return false }
        let keyword = trimmed[..<equals].trimmingSuffix(" ")
        return Self.keywords.contains(String(keyword))
    }

    /// Parses and checks `connectionString` with libpq (`PQconninfoParse`).
    /// - Throws: ``PostgresConfigurationError`` when libpq cannot parse it (libpq's reason, which
    ///   never repeats a password) or when it holds a password, or when libpq is not installed
    ///   ("PostgreSQL support needs libpq5: apt-get install libpq5 (…)").
    public init(_ connectionString: String) throws {
        if let failure = LibPQ.loadFailure() { throw PostgresConfigurationError(failure) }
        let values: [String: String]
        switch Self.parse(connectionString) {
        case .failure(let reason):
            throw PostgresConfigurationError("the database setting is not a PostgreSQL connection string libpq can read: \(reason.message)")
        case .success(let parsed):
            values = parsed
        }
        for secret in ["password", "sslpassword"] where values[secret].map({ !$0.isEmpty }) ?? false {
            throw PostgresConfigurationError("""
                the database setting holds a \(secret); passwords never go in the configuration or on the command line: \
                remove it and use PGPASSWORD or a ~/.pgpass file (or PGPASSFILE)
                """)
        }
        self.connectionString = connectionString
        var database = values["host"] ?? values["hostaddr"] ?? ""
        if let port = values["port"], !port.isEmpty { database += ":" + port }
        database += "/" + (values["dbname"] ?? "")
        self.database = database
        self.description = "postgresql://" + (values["user"].flatMap { $0.isEmpty ? nil : $0 + "@" } ?? "") + database
    }

    /// The passwords a connection string holds (`user:secret@host`, `password=`, `sslpassword=`),
    /// as libpq reads them, so that they can be hidden from every message; empty when libpq
    /// cannot parse it or it holds none.
    public static func passwords(in connectionString: String) -> [String] {
        guard case .success(let values) = parse(connectionString) else { return [] }
        return ["password", "sslpassword"].compactMap { values[$0] }.filter { !$0.isEmpty }
    }

    /// The options libpq reads from `connectionString` (`PQconninfoParse`), by keyword, or
    /// libpq's reason when it cannot (which never repeats a value).
    private static func parse(_ connectionString: String) -> Swift.Result<[String: String], PostgresConfigurationError> {
        if let failure = LibPQ.loadFailure() { return .failure(PostgresConfigurationError(failure)) }
        var message: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(connectionString, &message) else {
            let reason = message.map { String(cString: $0).trimmingSuffix("\n") } ?? "out of memory"
            PQfreemem(message)
            return .failure(PostgresConfigurationError(reason))
        }
        defer { PQconninfoFree(options) }
        var values: [String: String] = [:]
        var option = options
        while let keyword = option.pointee.keyword {
            if let value = option.pointee.val { values[String(cString: keyword)] = String(cString: value) }
            option += 1
        }
        return .success(values)
    }

    /// libpq's connection keywords (`PQconndefaults`), for ``recognizes(_:)``.
    private static let keywords: Set<String> = {
        var names: Set<String> = []
        guard LibPQ.loadFailure() == nil, let defaults = PQconndefaults() else { return ["host", "hostaddr", "port", "dbname", "user", "service"] }
        defer { PQconninfoFree(defaults) }
        var option = defaults
        while let keyword = option.pointee.keyword {
            names.insert(String(cString: keyword))
            option += 1
        }
        return names
    }()
}

extension StringProtocol {
    /// The text without trailing copies of `character`.
    func trimmingSuffix(_ character: Character) -> String {
        var text = String(self)
        while text.last == character { text.removeLast() }
        return text
    }
}
