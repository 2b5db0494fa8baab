import Foundation
@testable import IncidentApp
import IncidentCore
import IncidentFeeds
import IncidentSQLite
import TestSupport
import Testing

/// The one mapping from error types to exit statuses and messages (docs/operator.md, "Exit statuses"),
/// and the command-line advice that only IncidentApp adds.
@Suite("Failure mapping")
struct FailureTests {
    struct Other: Error, CustomStringConvertible { var description: String { "disk I/O error" } }

    static let run = IngestRun(source: "gits", startedAt: UTCInstant(secondsSince1970: 0), finishedAt: UTCInstant(secondsSince1970: 0),
                               status: .failed)

    @Test("each kind of error has one status, one event and one message", arguments: [
        (UsageError("--limit: 'x' is not a whole number") as any Error, 64, "usage", "--limit: 'x' is not a whole number"),
        (QueryError("search text has nothing to search for"), 64, "usage", "search text has nothing to search for"),
        (ConfigurationError("config.json: sources[0] (g): unknown field 'bbox'"), 78, "config.invalid", "config.json: sources[0] (g): unknown field 'bbox'"),
        (StoreMissing(database: "/x.sqlite"), 66, "database.missing",
         "no incidents database at /x.sqlite; give the scheduler's configuration (--config FILE; /etc/trafficincidents/config.json is read when it exists) "
         + "or --database naming its database, or create it with `incident-scheduler run --once` using that same configuration"),
        (InputFileMissing(path: "/in.xml"), 66, "input.missing", "cannot read /in.xml: no such file, a directory, or not readable"),
        (SchedulerLocked(database: "/x.sqlite", holder: "pid 7"), 75, "scheduler.locked",
         "another incident-scheduler is working on this database (/x.sqlite, held by pid 7); this run did nothing"),
        (DatabaseFailure(database: "/x.sqlite", cause: MigrationError.pending(names: ["0005_x"])), 1, "database.unavailable",
         "the incidents database /x.sqlite failed: the database needs migrations 0005_x before it can be read; run `incident-scheduler migrate` first"),
        (DatabaseFailure(database: "/x.sqlite", cause: MigrationError.newerSchema(databaseVersion: 9, knownVersion: 4)), 1, "database.unavailable",
         "the incidents database /x.sqlite failed: the database schema is version 9, newer than this binary knows (4); it was not modified; use a newer incident-scheduler and incidents"),
        (NoSuchIncident(id: 9), 1, "failed", "no incident with id 9; `incidents list` shows the ids"),
        (Other(), 1, "failed", "disk I/O error"),
    ] as [(any Error, Int32, String, String)])
    func mapping(error: any Error, status: Int32, event: String, message: String) {
        let failure = Failure(error, commandPath: ["incidents", "list"])
        #expect(failure.status == status)
        #expect(failure.event == event)
        #expect(failure.message == message)
        #expect((failure.usagePath != nil) == (status == 64))
    }

    @Test("a failed ingest --file: not a good answer 65, unreadable 66, a signal 130, anything else (the database) 1", arguments: [
        (FeedError(.malformedBody, provider: "gits", message: "malformed XML") as (any Error)?, 65),
        (FeedError(.apiError, provider: "gits", code: "99", message: "headerCd=99"), 65),
        (FeedError(.unexpectedResponse, provider: "gits", message: "an HTML page"), 65),
        (FeedError(.unreadableFile, provider: "gits", message: "cannot read"), 66),
        (CancellationError(), 130),
        (SQLiteError(code: .full, message: "database or disk is full"), 1),
        (nil, 1),
    ] as [((any Error)?, Int32)])
    func ingestFile(cause: (any Error)?, status: Int32) {
        let failure = Failure(IngestFailed(run: Self.run, cause: cause), commandPath: ["incident-scheduler", "ingest"])
        #expect(failure.status == status)
        #expect(failure.message == nil, "the run's own log line already said what failed")
    }

    @Test("run --once: the round's status, logged per source already", arguments: [Int32(1), 3, 130])
    func round(status: Int32) {
        let failure = Failure(RoundOutcome(status: status), commandPath: ["incident-scheduler", "run"])
        #expect(failure.status == status && failure.message == nil)
        #expect(failure.level == (status == 3 ? .warning : .error))
    }

    @Test("the command line's advice is added here, to the facts the other targets state", arguments: [
        (FeedError(.invalidKey, provider: "its", code: "4005", message: "the ITS API refused the key (resultCode 4005, no message)") as any Error,
         FeedOrigin.live, "its: the ITS API refused the key (resultCode 4005, no message); check the key that the source's `keyEnv` or `keyFile` gives"),
        (FeedError(.missingKey, provider: "gits", message: "source 'gits' has no API key"), .live,
         "gits: source 'gits' has no API key; set `keyEnv` or `keyFile` for the source in the configuration"),
        (FeedError(.unexpectedResponse, provider: "gits", message: "the file is not GITS XML"), .file(path: "/f.xml", complete: false),
         "gits: the file is not GITS XML; check the file and --source"),
        (FeedError(.unexpectedResponse, provider: "gits", message: "expected GITS XML but got an HTML page"), .live,
         "gits: expected GITS XML but got an HTML page"),
        (FeedError(.apiError, provider: "gits", code: "99", message: "GITS API error headerCd=99"), .live, "gits: GITS API error headerCd=99"),
    ] as [(any Error, FeedOrigin, String)])
    func advice(error: any Error, origin: FeedOrigin, text: String) {
        #expect(ErrorText.describe(error, origin: origin) == text)
    }

    @Test("no message of the other targets names this program's commands, flags or configuration fields")
    func noAdviceOutsideTheApp() throws {
        let sources = TestPaths.packageRoot.appendingPathComponent("Sources")
        var offenders: [String] = []
        for target in ["IncidentCore", "IncidentFeeds", "IncidentSQLite", "IncidentNetworking", "IncidentXML"] {
            let directory = sources.appendingPathComponent(target)
            let files = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil)?
                .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" } ?? []
            for file in files {
                for (number, line) in try String(contentsOf: file, encoding: .utf8).split(separator: "\n").enumerated()
                where !line.trimmingCharacters(in: .whitespaces).hasPrefix("//") && line.contains("\"") {
                    for word in ["incident-scheduler ", "incidents list", "keyEnv", "keyFile", "--source", "--database", "--config"]
                    where line.contains(word) {
                        offenders.append("\(file.lastPathComponent):\(number + 1): \(word)")
                    }
                }
            }
        }
        #expect(offenders.isEmpty, "\(offenders)")
    }
}

/// The database errors an operator can fix say what to check (the attack trial: a read-only
/// file, a directory as the database, said only "SQLite error 8" or "disk I/O error").
@Suite("SQLite errors with advice")
struct SQLiteAdviceTests {
    @Test("each fixable SQLite error says what to check", arguments: [
        (SQLiteError.Code.readOnly, "this user may not write the database file or its directory"),
        (SQLiteError.Code(rawValue: 1544), "this user may not write the database file or its directory"),  // SQLITE_READONLY_DBMOVED
        (SQLiteError.Code.cantOpen, "check that the path names a file (not a directory)"),
        (SQLiteError.Code(rawValue: 266), "check the path (a directory, a file this user may not read or write) and the disk"),  // SQLITE_IOERR_READ
        (SQLiteError.Code.full, "the disk is full: free space and run again"),
        (SQLiteError.Code.busy, "another process holds the database: retry later"),
    ])
    func advice(code: SQLiteError.Code, advice: String) {
        #expect(SQLiteError(code: code, message: "m").description.contains("; " + advice), "\(SQLiteError(code: code, message: "m"))")
    }
}
