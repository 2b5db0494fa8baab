import Foundation
import TestSupport
import Testing

/// The cron log's rotation (issue 20, point 10): `Scripts/logrotate.d/trafficincidents`, which
/// `Scripts/install` puts in `/etc/logrotate.d`, run by Debian's logrotate itself on a copy whose
/// log is in a scratch directory, with a state file of its own. Every directive of the file is
/// checked for what it says: weekly (by the state's date), rotate 8, compress with delaycompress,
/// notifempty, missingok, create's mode and owner, and su (the rotation as the log's owner).
@Suite("End to end: the cron log's logrotate file", .serialized)
struct LogrotateTests {
    /// Debian's logrotate (Scripts/bootstrap installs it); `LOGROTATE` names another binary.
    static let executable = ProcessInfo.processInfo.environment["LOGROTATE"] ?? "/usr/sbin/logrotate"

    /// The account the copy names instead of trafficincidents (absent here) for `su` and
    /// `create`: as root, nobody and nogroup, an unprivileged owner as the service's is;
    /// otherwise the user running the tests.
    static func account() throws -> (user: String, group: String, uid: uid_t, gid: gid_t) {
        let (uid, gid) = runningAsRoot ? (uid_t(65534), gid_t(65534)) : (getuid(), getgid())
        let user = try #require(getpwuid(uid).map { String(cString: $0.pointee.pw_name) }, "no user \(uid)")
        let group = try #require(getgrgid(gid).map { String(cString: $0.pointee.gr_name) }, "no group \(gid)")
        return (user, group, uid, gid)
    }

    /// A scratch directory with `log/` (0750, the account's, as tmpfiles.d makes
    /// /var/log/trafficincidents) and the copy of the logrotate file pointed at
    /// `log/scheduler.log`.
    struct Setup {
        let directory: URL
        let log: String
        let config: String
        let state: String
        let account: (user: String, group: String, uid: uid_t, gid: gid_t)

        init() throws {
            account = try LogrotateTests.account()
            directory = try TestPaths.temporaryDirectory("logrotate")
            let logDirectory = directory.appendingPathComponent("log")
            try FileManager.default.createDirectory(at: logDirectory, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o750])
            try #require(chown(logDirectory.path, account.uid, account.gid) == 0, "chown \(logDirectory.path): \(String(cString: strerror(errno)))")
            log = logDirectory.appendingPathComponent("scheduler.log").path
            let original = try String(contentsOf: TestPaths.packageRoot.appendingPathComponent("Scripts/logrotate.d/trafficincidents"), encoding: .utf8)
            // The copy differs in the log's path and the account only.
            try #require(original.components(separatedBy: "/var/log/trafficincidents/scheduler.log {").count == 2, "\(original)")
            try #require(original.components(separatedBy: "trafficincidents trafficincidents\n").count == 3, "su and create name the service's account: \(original)")
            let copy = original.replacingOccurrences(of: "/var/log/trafficincidents/scheduler.log", with: log)
                .replacingOccurrences(of: "trafficincidents trafficincidents\n", with: "\(account.user) \(account.group)\n")
            config = directory.appendingPathComponent("trafficincidents").path
            // As root, logrotate ignores a configuration that others may write.
            try Data(copy.utf8).write(to: URL(fileURLWithPath: config))
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: config)
            state = directory.appendingPathComponent("state").path
        }

        /// logrotate with `options`, this state file and the copy.
        func logrotate(_ options: [String]) async throws -> ProcessResult {
            try #require(FileManager.default.isExecutableFile(atPath: LogrotateTests.executable), """
                \(LogrotateTests.executable) is missing: Scripts/bootstrap installs Debian's logrotate for this test \
                (or set LOGROTATE to a logrotate binary)
                """)
            return await (try RunningProcess(URL(fileURLWithPath: LogrotateTests.executable), options + ["-s", state, config])).finished(timeout: 30)
        }

        /// Forces a rotation (`-f`, as the weekly run does once a week), with no error.
        func force(sourceLocation: SourceLocation = #_sourceLocation) async throws {
            let result = try await logrotate(["-f"])
            #expect(result.status == 0 && !result.stderr.contains("error"), "logrotate -f: \(result.stderr)", sourceLocation: sourceLocation)
        }

        /// Writes `text` as the log, as the cron line's `2>>` under `umask 027` makes it.
        func write(_ text: String) throws {
            try #require(FileManager.default.createFile(atPath: log, contents: Data(text.utf8), attributes: [.posixPermissions: 0o640]))
            try #require(chown(log, account.uid, account.gid) == 0)
        }

        func read(_ suffix: String) -> String? {
            (try? Data(contentsOf: URL(fileURLWithPath: log + suffix))).map { String(decoding: $0, as: UTF8.self) }
        }

        func exists(_ suffix: String) -> Bool { FileManager.default.fileExists(atPath: log + suffix) }

        /// The text of a gzip file, by gzip.
        func gunzipped(_ suffix: String) async throws -> String? {
            let result = try await shell("gzip -dc \(shellQuoted(log + suffix))")
            return result.status == 0 ? result.stdout : nil
        }

        /// Mode, owner and group of the file at `log + suffix`.
        func attributes(_ suffix: String) throws -> (mode: Int, uid: uid_t, gid: gid_t) {
            var info = stat()
            try #require(stat(log + suffix, &info) == 0, "stat \(log + suffix): \(String(cString: strerror(errno)))")
            return (Int(info.st_mode & 0o7777), info.st_uid, info.st_gid)
        }
    }

    @Test("logrotate -d reads the file without an error and would rotate the log weekly, 8 times, as the log's owner")
    func parses() async throws {
        let setup = try Setup()
        try setup.write("a line\n")
        let result = try await setup.logrotate(["-d"])
        #expect(result.status == 0, "\(result.stderr)")
        let output = result.stdout + result.stderr
        #expect(!output.contains("error"), "\(output)")
        #expect(output.contains("rotating pattern: \(setup.log)") && output.contains("weekly (8 rotations)"), "\(output)")
        // su: the log is handled as its owner, not as root.
        if runningAsRoot { #expect(output.contains("switching euid from 0 to \(setup.account.uid) and egid from 0 to \(setup.account.gid)"), "\(output)") }
        #expect(setup.read("") == "a line\n" && !setup.exists(".1"), "-d changes nothing")
    }

    @Test("forced and weekly rotations do what the file says: delaycompress then compress, create 0640 as the account, notifempty, weekly by the state, 8 kept, missingok")
    func rotates() async throws {
        let setup = try Setup()
        let owner = (setup.account.uid, setup.account.gid)
        // The first rotation: the log moves to .1, uncompressed (delaycompress); a new, empty
        // log is created with create's mode and owner.
        try setup.write("first\n")
        try await setup.force()
        #expect(setup.read(".1") == "first\n")
        #expect(setup.read("") == "", "create makes a new, empty log")
        let created = try setup.attributes("")
        #expect(created.mode == 0o640 && (created.uid, created.gid) == owner, "create 0640 \(setup.account.user) \(setup.account.group): \(created)")
        // The second: .1 is compressed to .2.gz (compress), the log moves to .1.
        try setup.write("second\n")
        try await setup.force()
        #expect(setup.read(".1") == "second\n")
        #expect(try await setup.gunzipped(".2.gz") == "first\n")
        #expect(!setup.exists(".2"))
        for suffix in [".1", ".2.gz"] {
            let rotated = try setup.attributes(suffix)
            #expect(rotated.mode == 0o640 && (rotated.uid, rotated.gid) == owner, "\(suffix): \(rotated)")
        }
        // An empty log is not rotated, even forced (notifempty).
        try setup.write("")
        try await setup.force()
        #expect(!setup.exists(".3.gz") && setup.read(".1") == "second\n", "notifempty")
        // Weekly: the state says the log was rotated today, so an unforced run leaves it; a
        // state 8 days old makes the run rotate it.
        try setup.write("third\n")
        let today = try await setup.logrotate([])
        #expect(today.status == 0 && !today.stderr.contains("error"), "\(today.stderr)")
        #expect(setup.read("") == "third\n", "not rotated again the same day")
        let state = try String(contentsOfFile: setup.state, encoding: .utf8)
        let entry = try #require(state.split(separator: "\n").first { $0.hasPrefix("\"\(setup.log)\" ") }, "\(state)")
        let old = Calendar(identifier: .gregorian).dateComponents(in: .current, from: Date().addingTimeInterval(-8 * 86_400))
        let dated = "\"\(setup.log)\" \(old.year!)-\(old.month!)-\(old.day!)-\(old.hour!):\(old.minute!):\(old.second!)"
        try state.replacingOccurrences(of: String(entry), with: dated).write(toFile: setup.state, atomically: true, encoding: .utf8)
        let week = try await setup.logrotate([])
        #expect(week.status == 0 && !week.stderr.contains("error"), "\(week.stderr)")
        #expect(setup.read(".1") == "third\n", "rotated a week after the last rotation")
        #expect(try await setup.gunzipped(".3.gz") == "first\n")
        // rotate 8: after 10 rotations in all, .1 and .2.gz … .8.gz; the oldest are deleted.
        for n in 4...10 {
            try setup.write("rotation \(n)\n")
            try await setup.force()
        }
        let kept = try FileManager.default.contentsOfDirectory(atPath: URL(fileURLWithPath: setup.log).deletingLastPathComponent().path).sorted()
        #expect(kept == ["scheduler.log", "scheduler.log.1"] + (2...8).map { "scheduler.log.\($0).gz" }, "\(kept)")
        #expect(try await setup.gunzipped(".8.gz") == "third\n", "the eighth is the third rotation's")
        // missingok: no log, no error.
        try FileManager.default.removeItem(atPath: setup.log)
        try await setup.force()
    }
}
