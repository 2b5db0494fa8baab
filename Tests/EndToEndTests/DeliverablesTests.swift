import Foundation
import TestSupport
import Testing

/// What `Scripts/install` installs, judged by the tools operators use (issue 14): the systemd
/// units by systemctl and systemd-analyze, the scheduler's system calls by strace against the
/// units' filter, the man pages by man, the completions by bash, zsh and fish, and the tables by
/// a pseudo-terminal 80 columns wide.
@Suite("End to end: installed files", .serialized)
struct DeliverablesTests {
    /// `Scripts/install` into a scratch root, with the debug binaries.
    static func install() async throws -> URL {
        let root = try TestPaths.temporaryDirectory("root")
        let result = try await shell("exec \(shellQuoted(TestPaths.packageRoot.appendingPathComponent("Scripts/install").path))",
                                     environment: ["DESTDIR": root.path, "BIN_DIR": Executables.directory.path])
        #expect(result.status == 0, "Scripts/install: \(result.stderr)")
        return root
    }

    static let units = ["incident-scheduler.service", "incident-scheduler-loop.service", "incident-scheduler.timer", "incidents-serve.service"]

    static func unitText(_ name: String) throws -> String {
        try String(contentsOf: TestPaths.packageRoot.appendingPathComponent("Scripts/systemd/\(name)"), encoding: .utf8)
    }

    /// The values of `key=` lines of a unit, in order.
    static func values(_ key: String, in unit: String) -> [String] {
        unit.split(separator: "\n").filter { $0.hasPrefix("\(key)=") }.map { String($0.dropFirst(key.count + 1)) }
    }

    // MARK: systemd

    @Test("the units install into a root: enable works, systemd-analyze verify is silent, security rates each ≤ 2.5")
    func systemdUnits() async throws {
        let root = try await Self.install()
        // What the units refer to on a real system: systemd's own units, kill(1).
        let prepared = try await shell("""
            set -e; mkdir -p "$R/usr/lib/systemd" "$R/usr/bin"; cp -r /usr/lib/systemd/system "$R/usr/lib/systemd/"
            cp /usr/bin/kill "$R/usr/bin/kill"; ln -s usr/bin "$R/bin"
            """, environment: ["R": root.path])
        #expect(prepared.status == 0, "\(prepared.stderr)")
        let system = root.appendingPathComponent("etc/systemd/system")
        let enable = try await shell("systemctl --root=\"$R\" enable incident-scheduler-loop.service incident-scheduler.timer",
                                     environment: ["R": root.path])
        #expect(enable.status == 0, "\(enable.stderr)")
        for link in ["multi-user.target.wants/incident-scheduler-loop.service", "timers.target.wants/incident-scheduler.timer"] {
            let target = try? FileManager.default.destinationOfSymbolicLink(atPath: system.appendingPathComponent(link).path)
            #expect(target == "/etc/systemd/system/" + URL(fileURLWithPath: link).lastPathComponent, "\(link)")
        }
        // Documentation=man:incident-scheduler(1) is checked against the installed man page.
        let verify = try await shell("systemd-analyze verify --root=\"$R\" " + Self.units.map { "\"$R/etc/systemd/system/\($0)\"" }.joined(separator: " "),
                                     environment: ["R": root.path, "MANPATH": root.appendingPathComponent("usr/local/share/man").path])
        #expect(verify.status == 0 && verify.stderr.isEmpty && verify.stdout.isEmpty, "verify: \(verify.stdout)\(verify.stderr)")
        for unit in Self.units where unit.hasSuffix(".service") {
            let security = try await shell("systemd-analyze security --offline=yes --root=\"$R\" \(unit)", environment: ["R": root.path])
            let overall = try #require(security.stdout.split(separator: "\n").first { $0.contains("Overall exposure level for \(unit):") })
            // "→ Overall exposure level for UNIT: 1.2 OK :-)"
            let after = overall[try #require(overall.range(of: "\(unit): ")).upperBound...]
            let score = try #require(Double(after.prefix { $0.isNumber || $0 == "." }), "\(overall)")
            #expect(score <= 2.5, "\(unit): \(overall)")
            print("systemd-analyze security \(unit): \(score)")
        }
    }

    @Test("the units: the loop restarts but not on usage or configuration errors; one sandbox; every documented path allowed")
    func unitSettings() throws {
        let loop = try Self.unitText("incident-scheduler-loop.service")
        let once = try Self.unitText("incident-scheduler.service")
        #expect(Self.values("WantedBy", in: loop) == ["multi-user.target"])
        #expect(Self.values("Restart", in: loop) == ["on-failure"])
        #expect(Self.values("RestartPreventExitStatus", in: loop) == ["64 78"])
        #expect(Self.values("SuccessExitStatus", in: once) == ["3"])
        func sandbox(_ unit: String) -> Substring {
            unit[unit.range(of: "# Sandbox")!.lowerBound...].prefix { $0 != "[" }
        }
        #expect(sandbox(loop).trimmingCharacters(in: .whitespacesAndNewlines) == sandbox(once).trimmingCharacters(in: .whitespacesAndNewlines))
        for unit in [loop, once] {
            #expect(Self.values("ProtectSystem", in: unit) == ["strict"])
            // The database's directory is the state directory (writable under ProtectSystem=strict).
            #expect(Self.values("StateDirectory", in: unit) == ["trafficincidents"])
            let exec = try #require(Self.values("ExecStart", in: unit).first)
            // The configuration alone says where the data goes (issue 20); keys come as under cron.
            #expect(!exec.contains("--database"))
            #expect(exec.contains(" --config /etc/trafficincidents/config.json --env-file /etc/trafficincidents/keys.env"))
            // The metrics directory of docs/operator.md and the crontab (Debian's node_exporter's) is writable.
            #expect(Self.values("ReadWritePaths", in: unit) == ["-/var/lib/prometheus/node-exporter"])
            // Configuration and key files under /etc stay readable: nothing hides /etc.
            #expect(Self.values("InaccessiblePaths", in: unit).isEmpty && Self.values("TemporaryFileSystem", in: unit).isEmpty)
            #expect(Self.values("EnvironmentFile", in: unit).isEmpty)
        }
        let crontab = try String(contentsOf: TestPaths.packageRoot.appendingPathComponent("Scripts/cron/incident-scheduler.crontab"), encoding: .utf8)
        #expect(crontab.contains("--metrics-file /var/lib/prometheus/node-exporter/"))
        let cronLines = crontab.split(separator: "\n").filter { !$0.hasPrefix("#") }
        #expect(!cronLines.contains { $0.contains("--database") })
        #expect(cronLines.contains { $0.contains(" --config /etc/trafficincidents/config.json --env-file /etc/trafficincidents/keys.env") })
    }

    /// Every system call of a named group, from `systemd-analyze syscall-filter` (groups nest).
    static func syscallGroups() async throws -> [String: [String]] {
        let listing = try await shell("systemd-analyze syscall-filter")
        var groups: [String: [String]] = [:]
        var current: String?
        for line in listing.stdout.split(separator: "\n") {
            let text = line.trimmingCharacters(in: .whitespaces)
            if !line.hasPrefix(" ") && text.hasPrefix("@") {
                current = text
                groups[text] = []
            } else if let current, !text.isEmpty, !text.hasPrefix("#") {
                groups[current, default: []].append(text)
            }
        }
        return groups
    }

    @Test("under strace, run --once makes only the system calls, sockets and mappings the units allow")
    func systemCalls() async throws {
        let groups = try await Self.syscallGroups()
        func expand(_ name: String) -> Set<String> {
            name.hasPrefix("@") ? (groups[name] ?? []).reduce(into: Set<String>()) { $0.formUnion(expand($1)) } : [name]
        }
        let unit = try Self.unitText("incident-scheduler.service")
        var allowed = Set<String>()
        var denied = Set<String>()
        for filter in Self.values("SystemCallFilter", in: unit) {
            let deny = filter.hasPrefix("~")
            let names = filter.dropFirst(deny ? 1 : 0).split(separator: " ").map(String.init)
            for name in names { deny ? denied.formUnion(expand(name)) : allowed.formUnion(expand(name)) }
        }
        allowed.subtract(denied)
        #expect(allowed.contains("openat") && allowed.contains("socket") && !allowed.contains("setuid"))

        let server = try await LoopbackServer.start(routes: [
            "/gits/getIncidentInfo": [ResponseSpec(bodyFile: TestPaths.fixture("gits/incidents_3.xml").path)],
            "/its/eventInfo": [ResponseSpec(bodyFile: TestPaths.fixture("its/eventInfo_envelope_2items.json").path)],
        ])
        let ws = try Workspace()
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: ws.directory.path)
        let config = try ws.write("config.json", """
            {"database": "\(ws.database)", "sources": [
              {"name": "gits", "provider": "gits", "keyEnv": "K", "baseURL": "\(server.url("/gits/").absoluteString)"},
              {"name": "its", "provider": "its", "keyEnv": "K", "baseURL": "\(server.url("/its/").absoluteString)"}]}
            """)
        let trace = ws.directory.appendingPathComponent("trace").path
        // As the units run it: an unprivileged user (root would also fchown SQLite's files).
        let user = runningAsRoot ? "setpriv --reuid=65534 --regid=65534 --clear-groups " : ""
        let result = try await shell("K=k HOME=\(shellQuoted(ws.directory.path)) exec \(user)strace -f -qq -o \(shellQuoted(trace)) \(shellQuoted(executablesForAnyUser + "/incident-scheduler")) run --once --config \(shellQuoted(config)) --metrics-file \(shellQuoted(ws.directory.appendingPathComponent("m.prom").path))")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try await ws.listJSON().count == 5)
        let lines = try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n")
        // From the scheduler's own execve on (strace's child runs a few calls before it).
        let start = lines.firstIndex { $0.contains("execve(") && $0.contains("incident-scheduler") } ?? 0
        var used = Set<String>()
        var families = Set<String>()
        for line in lines[start...] {
            let text = line.drop { $0 != " " }.drop { $0 == " " }
            guard let name = text.prefix(while: { $0.isLetter || $0.isNumber || $0 == "_" }).nonEmpty else { continue }
            if text.hasPrefix("<... ") { continue }
            used.insert(String(name))
            if name == "socket", let family = text.split(separator: "(").dropFirst().first?.split(separator: ",").first {
                families.insert(String(family))
            }
            #expect(!(text.contains("PROT_WRITE") && text.contains("PROT_EXEC")), "writable and executable memory: \(line)")
            if name == "mprotect" { #expect(!text.contains("PROT_EXEC"), "\(line)") }
        }
        #expect(used.contains("connect") && used.contains("pwrite64") && used.contains("rename"), "the trace saw the work: \(used.sorted())")
        // Dispatch asks for a lower nice value (setpriority), which the filter answers with
        // EPERM (SystemCallErrorNumber=) as the kernel already does for an unprivileged user.
        #expect(Self.values("SystemCallErrorNumber", in: unit) == ["EPERM"])
        let outside = used.subtracting(allowed).subtracting(["setpriority"])
        #expect(outside.isEmpty, "system calls the units' filter refuses: \(outside.sorted())")
        let allowedFamilies = Set(Self.values("RestrictAddressFamilies", in: unit).flatMap { $0.split(separator: " ").map(String.init) })
        #expect(families.isSubset(of: allowedFamilies) && families.contains("AF_INET"), "sockets: \(families.sorted())")
        #expect(Self.values("MemoryDenyWriteExecute", in: unit) == ["yes"])
    }

    // MARK: Man pages, completions, example

    @Test("the installed man pages pass man --warnings and list every command and option")
    func manPages() async throws {
        let root = try await Self.install()
        for tool in ["incident-scheduler", "incidents"] {
            let page = root.appendingPathComponent("usr/local/share/man/man1/\(tool).1").path
            let checked = try await shell("LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l -Tutf8 \(shellQuoted(page)) > /dev/null")
            #expect(checked.status == 0 && checked.stderr.isEmpty, "\(tool).1: \(checked.stderr)")
            let rendered = try await shell("LC_ALL=C.UTF-8 MANWIDTH=200 man -l \(shellQuoted(page)) 2>/dev/null | col -b")
            let help = try await run(tool, ["--help"]).stdout
            let commands = help.components(separatedBy: "COMMANDS:\n").last?.split(separator: "\n").compactMap {
                $0.hasPrefix("  ") && !$0.hasPrefix("   ") ? $0.split(separator: " ").first.map(String.init) : nil
            }.filter { $0 != "See" } ?? []
            #expect(!commands.isEmpty)
            for command in commands {
                #expect(rendered.stdout.contains("\(tool) \(command)"), "\(tool).1 lacks \(command)")
                let options = try await run(tool, ["help", command]).stdout.split(separator: "\n").compactMap { line -> String? in
                    line.split(separator: " ").first { $0.hasPrefix("--") }.map(String.init)
                }.filter { $0 != "--help" }
                for option in options { #expect(rendered.stdout.contains(option), "\(tool).1 lacks \(command) \(option)") }
            }
            for section in ["NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "EXIT STATUS", "ENVIRONMENT", "SEE ALSO"] {
                #expect(rendered.stdout.contains("\n\(section)\n"), "\(tool).1 lacks \(section)")
            }
            #expect(!rendered.stdout.contains("generate-"), "hidden commands are not documented")
        }
    }

    @Test("bash completion offers the commands, each command's options and the values of choice options")
    func bashCompletion() async throws {
        let root = try await Self.install()
        let directory = root.appendingPathComponent("usr/local/share/bash-completion/completions")
        func complete(_ tool: String, _ words: [String]) async throws -> [String] {
            let script = """
                PATH=\(shellQuoted(Executables.directory.path)):$PATH
                source \(shellQuoted(directory.appendingPathComponent(tool).path))
                complete -p \(tool) >&2
                COMP_WORDS=(\(words.map(shellQuoted).joined(separator: " "))); COMP_CWORD=\(words.count - 1)
                "$(complete -p \(tool) | awk '{print $3}')" \(tool) \(shellQuoted(words.last ?? "")) \(shellQuoted(words.dropLast().last ?? ""))
                printf '%s\\n' "${COMPREPLY[@]}"
                """
            let result = await (try RunningProcess(URL(fileURLWithPath: "/bin/bash"), ["-c", script])).finished()
            #expect(result.status == 0 && result.stderr.hasPrefix("complete -F "), "\(result.stderr)")
            return result.stdout.split(separator: "\n").map(String.init)
        }
        #expect(try await complete("incident-scheduler", ["incident-scheduler", ""]) ==
                ["run", "ingest", "sources", "status", "check-config", "migrate", "prune", "copy", "watches", "help", "--help", "--version"])
        #expect(try await complete("incident-scheduler", ["incident-scheduler", "st"]) == ["status"])
        #expect(try await complete("incident-scheduler", ["incident-scheduler", "status", "--"]) ==
                ["--config", "--env-file", "--database", "--stale-after", "--metrics-file", "--format", "--wide", "--help"])
        #expect(try await complete("incident-scheduler", ["incident-scheduler", "run", "--log-format", ""]) == ["logfmt", "json"])
        #expect(try await complete("incident-scheduler", ["incident-scheduler", "help", "ch"]) == ["check-config"])
        let list = try await complete("incidents", ["incidents", "list", "--format", ""])
        #expect(list.contains("table") && list.contains("json") && list.contains("csv"))
        #expect(try await complete("incidents", ["incidents", "runs", "--w"]) == ["--wide"])
        // A path option completes file names.
        let files = try await complete("incident-scheduler", ["incident-scheduler", "run", "--config", directory.appendingPathComponent("incident").path])
        #expect(files.sorted() == ["incident-scheduler", "incidents"].map { directory.appendingPathComponent($0).path })
        // Issue 20, point 16: --output completes file names (list's `file`, map's `file.html`),
        // --source the configured sources' names (of the --config on the line).
        for command in ["list", "stats", "map"] {
            let outputs = try await complete("incidents", ["incidents", command, "--output", directory.appendingPathComponent("incident").path])
            #expect(outputs.sorted() == ["incident-scheduler", "incidents"].map { directory.appendingPathComponent($0).path }, "\(command)")
        }
        let ws = try Workspace()
        let config = try ws.write("config.json", """
            {"database": "\(ws.database)", "sources": [
              {"name": "gits-suwon", "provider": "gits", "keyEnv": "K"},
              {"name": "its-seoul", "provider": "its", "keyEnv": "K"}, {"name": "its-busan", "provider": "its", "keyEnv": "K"}]}
            """)
        #expect(try await complete("incidents", ["incidents", "list", "--config", config, "--source", "its"]) == ["its-seoul", "its-busan"])
        #expect(try await complete("incidents", ["incidents", "runs", "--config", config, "--source", ""]) == ["gits-suwon", "its-seoul", "its-busan"])
        #expect(try await complete("incident-scheduler", ["incident-scheduler", "sources", "--config", config, "--clear-quota", "g"]) == ["gits-suwon"])
        #expect(try await complete("incidents", ["incidents", "list", "--config", ws.directory.appendingPathComponent("none.json").path,
                                                 "--source", ""]) == [], "no configuration: nothing offered, nothing printed")
    }

    @Test("zsh and fish load the completions; fish offers the commands and options")
    func zshAndFishCompletion() async throws {
        let root = try await Self.install()
        let share = root.appendingPathComponent("usr/local/share")
        for tool in ["incident-scheduler", "incidents"] {
            let zsh = try await shell("zsh -n \(shellQuoted(share.appendingPathComponent("zsh/site-functions/_\(tool)").path))")
            #expect(zsh.status == 0 && zsh.stderr.isEmpty, "zsh: \(zsh.stderr)")
            let fishFile = share.appendingPathComponent("fish/vendor_completions.d/\(tool).fish").path
            let fish = try await shell("fish -n \(shellQuoted(fishFile))")
            #expect(fish.status == 0 && fish.stderr.isEmpty, "fish: \(fish.stderr)")
        }
        let fishFile = share.appendingPathComponent("fish/vendor_completions.d/incident-scheduler.fish").path
        let offered = try await shell("fish -c \(shellQuoted("source \(fishFile); complete -C 'incident-scheduler st'; complete -C 'incident-scheduler status --f'; complete -C 'incident-scheduler status --format '"))")
        let words = offered.stdout.split(separator: "\n").map { String($0.split(separator: "\t").first ?? "") }
        #expect(words == ["status", "--format", "json", "table"], "\(offered.stdout)\(offered.stderr)")
    }

    @Test("the installed example configuration passes check-config")
    func exampleConfiguration() async throws {
        let root = try await Self.install()
        let example = root.appendingPathComponent("usr/local/share/doc/trafficincidents/config.example.json").path
        let result = try await run("incident-scheduler", ["check-config", "--config", example],
                                   environment: ["GITS_SERVICE_KEY": "example+key/1=", "ITS_API_KEY": "example-its-key"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("database: /var/lib/trafficincidents/incidents.sqlite\n"))
        #expect(FileManager.default.fileExists(atPath: root.appendingPathComponent("usr/local/share/doc/trafficincidents/README.md").path))
        #expect(FileManager.default.fileExists(atPath: root.appendingPathComponent("usr/local/share/doc/trafficincidents/docs/operator.md").path))
    }

    // MARK: Tables

    /// Runs `arguments` in a pseudo-terminal `columns` wide (Python's pty), output as lines.
    static func inTerminal(columns: Int, _ tool: String, _ arguments: [String], environment: [String: String] = [:]) async throws -> [String] {
        let script = """
            import fcntl, os, pty, struct, sys, termios
            pid, fd = pty.fork()
            if pid == 0:
                fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 24, \(columns), 0, 0))
                os.execv(sys.argv[1], sys.argv[1:])
            out = b""
            while True:
                try:
                    chunk = os.read(fd, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                out += chunk
            _, status = os.waitpid(pid, 0)
            sys.stdout.buffer.write(out.replace(b"\\r\\n", b"\\n"))
            sys.exit(os.waitstatus_to_exitcode(status))
            """
        let result = await (try RunningProcess(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", script, Executables.url(tool).path] + arguments,
                                                environment: environment)).finished()
        return result.stdout.split(separator: "\n").map(String.init)
    }

    static let timestamp = #"[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}(:[0-9]{2}Z)?"#

    @Test("sources, status, runs and check-config fit 80 columns in a terminal without cutting times; piped or --wide, nothing is cut")
    func tables() async throws {
        let server = try await LoopbackServer.start(routes: [
            "/a-rather-long-path/for-the-gits-provider/getIncidentInfo": [ResponseSpec(bodyFile: TestPaths.fixture("gits/incidents_3.xml").path)],
            "/its/eventInfo": [ResponseSpec(status: 503, body: "down")],
        ])
        let ws = try Workspace()
        let config = try ws.write("config.json", """
            {"database": "\(ws.database)", "sources": [
              {"name": "gits-gyeonggi-south", "provider": "gits", "keyEnv": "K", "baseURL": "\(server.url("/a-rather-long-path/for-the-gits-provider/").absoluteString)"},
              {"name": "its-chungcheong", "provider": "its", "keyEnv": "K", "baseURL": "\(server.url("/its/").absoluteString)",
               "bbox": [126.9, 36.0, 127.8, 36.8], "eventType": "acc", "retry": {"maxRetries": 0}}]}
            """)
        let polled = try await run("incident-scheduler", ["run", "--once", "--config", config], environment: ["K": "k"])
        #expect(polled.status == 1, "\(polled.stderr)")
        let commands: [(String, [String], [String])] = [
            ("incident-scheduler", ["sources", "--config", config], ["SOURCE", "LAST RUN", "STATUS"]),
            ("incident-scheduler", ["status", "--config", config], ["SOURCE", "HEALTH", "LAST SUCCESS", "FAILING SINCE"]),
            ("incidents", ["runs", "--database", ws.database], ["ID", "SOURCE", "STARTED (UTC)", "STATUS"]),
            ("incident-scheduler", ["check-config", "--config", config], ["SOURCE", "KEY", "URL"]),
        ]
        for (tool, arguments, columns) in commands {
            let name = arguments[0]
            let lines = try await Self.inTerminal(columns: 80, tool, arguments, environment: ["K": "k"])
            let table = lines.prefix(3)  // a header and two rows; what follows (notes, settings) is whole lines
            #expect(lines.count >= 3, "\(name): \(lines)")
            #expect(table.allSatisfy { $0.count <= 80 }, "\(name) is wider than 80 columns: \(table.map(\.count))\n\(lines.joined(separator: "\n"))")
            for column in columns { #expect(table.first?.contains(column) == true, "\(name) lost \(column): \(table.first ?? "")") }
            for row in table.dropFirst() {
                #expect(row.hasPrefix("gits-gyeonggi-south ") || row.hasPrefix("its-chungcheong ") || row.first?.isNumber == true,
                        "\(name): a source name was cut: \(row)")
                if name != "check-config" {
                    #expect(row.range(of: Self.timestamp, options: .regularExpression) != nil || row.contains("never"),
                            "\(name): a time was cut: \(row)")
                }
            }
            if name == "check-config" { #expect(table.dropFirst().allSatisfy { $0.contains(" set (REDACTED) ") }, "\(lines)") }

            // Piped: every value whole, however wide.
            let piped = try await run(tool, arguments, environment: ["K": "k"])
            #expect(!piped.stdout.contains("…"), "\(name) cut piped output:\n\(piped.stdout)")
            #expect(piped.stdout.split(separator: "\n").contains { $0.count > 80 } || name == "status", "\(name):\n\(piped.stdout)")
            // --wide in the terminal: the same whole values.
            let wide = try await Self.inTerminal(columns: 80, tool, arguments + ["--wide"], environment: ["K": "k"])
            #expect(wide.count >= 3 && !wide.joined().contains("…"), "\(name) --wide cut:\n\(wide.joined(separator: "\n"))")
        }
        let url = server.url("/a-rather-long-path/for-the-gits-provider/getIncidentInfo").absoluteString
        let wide = try await Self.inTerminal(columns: 80, "incident-scheduler", ["check-config", "--config", config, "--wide"], environment: ["K": "k"])
        #expect(wide.contains { $0.contains(url + "?serviceKey=REDACTED") })
    }
}

extension Substring {
    /// nil when empty.
    var nonEmpty: Substring? { isEmpty ? nil : self }
}
