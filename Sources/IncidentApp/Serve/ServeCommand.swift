import Foundation
import IncidentCore
import IncidentHTTP

/// `incidents serve`: the stored incidents over HTTP (``FeatureServer``), until SIGTERM or SIGINT.
enum ServeCommand {
    static let listen = ValueOption<(address: String, port: UInt16)>(
        "listen", placeholder: "address:port", help: "Listen on this address and port ([::1]:8080 for IPv6; port 0: any free one).",
        default: "127.0.0.1:8080", what: "ADDRESS:PORT") { try parseListen($0) }
    static let baseURL = ValueOption<String>(
        "base-url", placeholder: "url",
        help: "The server's public URL for absolute links (https://incidents.example.org behind a TLS proxy). Default: http:// and the request's Host.",
        what: "an http:// or https:// URL") { text in
            guard let url = URL(string: text), ["http", "https"].contains(url.scheme ?? ""), url.host != nil,
                  url.query == nil, url.fragment == nil else { return nil }
            return text.hasSuffix("/") ? String(text.dropLast()) : text
        }
    static let maxConnections = ValueOption<Int>(
        "max-connections", placeholder: "count", help: "Connections open at once; a further one is closed as soon as it is accepted.", default: "1024",
        what: "a whole number from 1 to 10000") { Int($0).flatMap { (1...10_000).contains($0) ? $0 : nil } }
    static let requestTimeout = ValueOption<Int64>(
        "request-timeout", placeholder: "duration", help: "Longest time from a request to its response's last byte.",
        default: "2m", what: "a duration") { try ValueParsers.duration($0) }
    static let idleTimeout = ValueOption<Int64>(
        "idle-timeout", placeholder: "duration", help: "Close a connection idle this long (a client that stopped reading or sending).",
        default: "30s", what: "a duration") { try ValueParsers.duration($0) }
    static let tokenFile = ValueOption<String>(
        "token-file", placeholder: "path",
        help: "Require `Authorization: Bearer TOKEN`, TOKEN read from this file (or from $INCIDENTS_SERVE_TOKEN). Never logged.",
        what: "a path") { $0.isEmpty ? nil : $0 }
    static let corsOrigin = RepeatingOption<String>(
        "cors-origin", placeholder: "origin", help: "Let pages of this origin read the API from a browser (https://app.example.org, or *; repeatable).",
        what: "an origin (scheme://host[:port]) or *") { text in
            text == "*" || (URL(string: text).map { ["http", "https"].contains($0.scheme ?? "") && $0.host != nil && $0.path.isEmpty } ?? false) ? text : nil
        }
    static let readers = ValueOption<Int>(
        "readers", placeholder: "count", help: "Database connections, each serving one request at a time.", default: "8",
        what: "a whole number from 1 to 64") { Int($0).flatMap { (1...64).contains($0) ? $0 : nil } }

    static func command(_ context: Context) -> Command {
        Command(
            name: "serve",
            abstract: "Serve the stored incidents over HTTP: OGC API – Features, a live map, runs, status, stats, metrics.",
            discussion: """
            Read-only: an SQLite database is opened read-only; on PostgreSQL the session is READ ONLY, so the
            reader role is enough. One logfmt line per request on stderr. Stops cleanly on SIGTERM.
            Endpoints: / (landing page), /conformance, /api (OpenAPI 3.0), /collections, /collections/incidents,
            /collections/incidents/items (bbox, datetime, limit, after, before and every filter of `list`),
            /collections/incidents/items/{id}, /map, /runs, /status, /stats, /metrics.
            /status is `incident-scheduler status --format json` over the sources of --config (read for each request):
            200 when that command would exit 0, 503 when it would exit 1 (a source failing) or 3 (one stale).

            Examples:
              incidents serve --listen 127.0.0.1:8080
              ogrinfo OAPIF:http://127.0.0.1:8080/ incidents
              curl 'http://127.0.0.1:8080/collections/incidents/items?active&road=경부&limit=100'
            """,
            options: QueryTool.databaseOptions + [listen, baseURL, maxConnections, requestTimeout, idleTimeout, tokenFile, corsOrigin,
                                                  readers, CommonOptions.logFormat],
            run: { arguments in try await run(arguments, context) })
    }

    static func run(_ arguments: ParsedArguments, _ context: Context) async throws {
        let logger = try arguments.logger(context)
        // Every option is read before the database is opened: a usage error exits 64 with its own message.
        let (address, port) = try arguments.value(listen) ?? ("127.0.0.1", 8080)
        let token = try bearerToken(arguments, context)
        let settings = FeatureServer.Settings(
            baseURL: try arguments.value(baseURL), corsOrigins: try arguments.values(corsOrigin), token: token)
        let readerCount = try arguments.value(readers) ?? 8
        var http = HTTPServerSettings(address: address, port: port)
        http.connectionLimit = try arguments.value(maxConnections) ?? 1024
        http.requestTimeoutSeconds = Int(try arguments.value(requestTimeout) ?? 120)
        http.idleTimeoutSeconds = Int(try arguments.value(idleTimeout) ?? 30)
        let path = try context.databasePath(arguments)
        let stores: ServerReaders
        do {
            stores = try ServerReaders(database: path, count: readerCount, clock: context.clock)
        } catch let error as StoreMissing {
            throw error
        } catch {
            throw DatabaseFailure(database: path, cause: error)
        }
        // `/status` reads the configuration for each request, as `incident-scheduler status` does for each
        // run, and refuses one that names another database, as the command line does at the start.
        let configurationFile = try context.configurationFile(arguments), environment = context.environment
        let server = FeatureServer(readers: stores, settings: settings, clock: context.clock, logger: logger) {
            let configuration = try SchedulerTool.loadConfiguration(file: configurationFile, environment: environment, requireKeys: false)
            if let configured = configuration.database, !configured.isEmpty, !Stores.sameDatabase(configured, path) {
                throw ConfigurationError("the configuration \(configurationFile ?? "") names the database \(Stores.displayName(configured)), "
                    + "not the served \(Stores.displayName(path))")
            }
            return configuration.sources
        }
        let running: HTTPServer
        do {
            running = try HTTPServer(http, handler: server.handle, failure: server.failure, completed: server.log)
        } catch let error as HTTPServerError {
            throw UsageError("--listen: \(error.message)")
        }
        logger.log(.info, "serve.listening", [
            "address": address, "port": Int(running.port), "database": Stores.displayName(path),
            "token": token == nil ? "none" : "required",
        ])
        // Until SIGTERM or SIGINT cancels this task (ProcessSignals).
        while !Task.isCancelled {
            try? await Task.sleep(nanoseconds: 3_600_000_000_000)
        }
        logger.log(.info, "serve.stopping", ["note": "finishing the responses under way"])
        running.stop()
        logger.log(.info, "serve.stopped")
    }

    /// `ADDRESS:PORT`; an IPv6 address in brackets (`[::1]:8080`).
    static func parseListen(_ text: String) throws -> (address: String, port: UInt16)? {
        guard let colon = text.lastIndex(of: ":"), let port = UInt16(text[text.index(after: colon)...]) else {
            throw UsageError("'\(text)' is not ADDRESS:PORT (127.0.0.1:8080, 0.0.0.0:8080, [::1]:8080)")
        }
        var address = String(text[..<colon])
        if address.hasPrefix("[") && address.hasSuffix("]") { address = String(address.dropFirst().dropLast()) }
        guard !address.isEmpty else { throw UsageError("'\(text)' has no address (127.0.0.1:8080)") }
        return (address, port)
    }

    /// The token from `--token-file` or `$INCIDENTS_SERVE_TOKEN`; nil when neither is given.
    /// - Throws: ``UsageError`` for a file that cannot be read, or a token that is empty or
    ///   holds characters RFC 6750's `b64token` does not allow.
    static func bearerToken(_ arguments: ParsedArguments, _ context: Context) throws -> String? {
        var token: String?
        if let file = try arguments.value(tokenFile) {
            guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { throw UsageError("--token-file: cannot read \(file)") }
            token = text.trimmingCharacters(in: .whitespacesAndNewlines)
        } else if let variable = context.environment["INCIDENTS_SERVE_TOKEN"] {
            token = variable.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        guard let token else { return nil }
        let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~+/=")
        guard token.count >= 16, token.allSatisfy(allowed.contains) else {
            throw UsageError("the bearer token must be at least 16 characters of A-Z a-z 0-9 - . _ ~ + / = (RFC 6750 b64token)")
        }
        return token
    }
}
