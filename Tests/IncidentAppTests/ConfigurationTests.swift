import Foundation
@testable import IncidentApp
import IncidentFeeds
import TestSupport
import Testing

@Suite("Configuration")
struct ConfigurationTests {
    func load(_ json: String, environment: [String: String] = ["K": "key+1/2="], files: [String: String] = [:]) throws -> Configuration {
        let directory = try TestPaths.temporaryDirectory("config")
        for (name, text) in files { try text.write(to: directory.appendingPathComponent(name), atomically: true, encoding: .utf8) }
        let url = directory.appendingPathComponent("config.json")
        try json.write(to: url, atomically: true, encoding: .utf8)
        return try Configuration.load(from: url, environment: environment)
    }

    func message(_ json: String, environment: [String: String] = ["K": "key+1/2="], files: [String: String] = [:]) -> String? {
        do {
            _ = try load(json, environment: environment, files: files)
            return nil
        } catch let error as ConfigurationError {
            return error.message
        } catch {
            return "unexpected \(error)"
        }
    }

    @Test("the process environment read from environ is Foundation's, entry for entry")
    func processEnvironment() {
        let environment = Context.processEnvironment()
        #expect(environment == ProcessInfo.processInfo.environment)
        #expect(environment["PATH"] == getenv("PATH").map { String(cString: $0) })
    }

    @Test("a full configuration loads with its values")
    func loads() throws {
        let c = try load("""
            {"database": "/tmp/x.sqlite", "deadline": "10m", "retention": "90d", "sources": [
              {"name": "gits", "provider": "gits", "keyEnv": "K", "interval": "2m", "timeout": "20s", "attemptTimeout": "3m",
               "retry": {"maxRetries": 2, "baseDelay": 0.25, "jitter": "equal"}},
              {"name": "its-a", "provider": "its", "keyFile": "its.key", "bbox": [126.76, 37.41, 127.18, 37.70]}]}
            """, files: ["its.key": "its+key==\n"])
        #expect(c.database == "/tmp/x.sqlite")
        #expect(c.deadlineSeconds == 600)
        #expect(c.retentionSeconds == 7_776_000)
        #expect(c.sources.map(\.name) == ["gits", "its-a"])
        #expect(c.sources[0].intervalSeconds == 120)
        #expect(c.sources[0].requestTimeoutSeconds == 20)
        #expect(c.sources[0].attemptTimeoutSeconds == 180)
        #expect(c.sources[1].attemptTimeoutSeconds == 300)
        #expect(c.sources[0].retryPolicy.maxRetries == 2)
        #expect(c.sources[0].retryPolicy.baseDelay == 0.25)
        #expect(c.sources[0].retryPolicy.jitter == .equal)
        #expect(c.sources[1].key?.percentEncoded == "its%2Bkey%3D%3D")
        #expect(c.sources[1].options[ITSProvider.bbox] == [126.76, 37.41, 127.18, 37.70])
        #expect(c.sources[1].options[ITSProvider.format] == "json")
        #expect(c.concurrency == 4)
    }

    @Test("mistakes are errors that name the place and say what is expected", arguments: [
        (#"{"sources": [{"name": "g", "provider": "gits", "keyenv": "K"}]}"#, "unknown field 'keyenv'"),
        (#"{"sources": [{"name": "g", "provider": "gitz", "keyEnv": "K"}]}"#, "unknown provider 'gitz'"),
        (#"{"sources": [{"name": "g", "provider": "gits", "keyEnv": "MISSING"}]}"#, "MISSING (keyEnv) is not set"),
        (#"{"sources": [{"name": "g", "provider": "gits", "keyEnv": "TWO"}]}"#, "more than one word or line"),
        (#"{"sources": [{"name": "g", "provider": "gits", "keyFile": "two.key"}]}"#, "more than one word or line"),
        (#"{"sources": [{"name": "g", "provider": "gits", "keyFile": "none.key"}]}"#, "none.key (keyFile) does not exist"),
        (#"{"sources": [{"name": "g", "provider": "gits", "keyFile": "empty.key"}]}"#, "is empty"),
        (#"{"sources": [{"name": "g", "provider": "gits", "keyEnv": "K", "retry": {"maxRetries": -1}}]}"#, "maxRetries must be 0 to 10"),
        (#"{"sources": [{"name": "g", "provider": "gits", "keyEnv": "K", "retry": {"factor": 0.5}}]}"#, "factor must be 1 to 10"),
        (#"{"sources": [{"name": "g", "provider": "gits", "keyEnv": "K", "retry": {"baseDelay": "1s"}}]}"#, "baseDelay: expected a number"),
        (#"{"sources": [{"name": "g", "provider": "gits", "keyEnv": "K", "retry": {"jitter": "lots"}}]}"#, "expected one of none, full, equal"),
        (#"{"sources": [{"name": "g", "provider": "gits", "keyEnv": "K", "retry": {"tries": 3}}]}"#, "unknown field 'tries'"),
        (#"{"sources": [{"name": "g", "provider": "gits", "keyEnv": "K", "interval": "0s"}]}"#, "interval:"),
        (#"{"sources": [{"name": "g", "provider": "gits", "keyEnv": "K"}, {"name": "g", "provider": "its", "keyEnv": "K"}]}"#, "two sources are named 'g'"),
        (#"{"sources": [{"name": "i", "provider": "its", "keyEnv": "K", "bbox": [127.2, 37.4, 126.8, 37.7]}]}"#, "bbox must be"),
        (#"{"sources": [{"name": "g", "provider": "gits", "keyEnv": "K", "bbox": [1, 2, 3, 4]}]}"#,
         "sources[0] (g): unknown field 'bbox' for provider gits (known: name, provider, keyEnv, keyFile, baseURL, interval, timeout, attemptTimeout, retry)"),
        (#"{"sources": [{"name": "i", "provider": "its", "keyEnv": "K", "bbox": "126,37,127,38"}]}"#, "sources[0] (i): bbox must be 4 numbers"),
        (#"{"sources": [{"name": "i", "provider": "its", "keyEnv": "K", "format": "csv"}]}"#, "sources[0] (i): format must be one of json, xml"),
        (#"{"sources": [{"name": "i", "provider": "its", "keyEnv": "K", "eventtype": "all"}]}"#,
         "unknown field 'eventtype' for provider its (known: name, provider, keyEnv, keyFile, baseURL, interval, timeout, attemptTimeout, retry, bbox, type, eventType, format)"),
        (#"{"sources": [{"name": "g", "provider": "gits", "keyEnv": "K", "interval": 300}]}"#, "sources[0] (g): interval: expected text"),
        (#"{"sources": [{"name": "g", "provider": "gits", "keyEnv": "K", "retry": {"maxRetries": 1.5}}]}"#, "retry: maxRetries: expected a whole number"),
        (#"{"sources": [{"provider": "gits", "keyEnv": "K"}]}"#, "sources[0]: missing field 'name'"),
        (#"{"sources": [{"name": "g", "provider": "gits", "keyEnv": "K"}], "concurrency": 0}"#, "concurrency: must be 1 to 64"),
        (#"{"sources": [{"name": "g", "provider": "gits", "keyEnv": "K"}], "concurrency": "4"}"#, "concurrency: expected a whole number"),
        (#"{"sources": [{"name": "g", "provider": "gits", "keyEnv": "K"}], "lease": "2s"}"#, "lease: must be at least 3s (it is renewed every third of it)"),
        (#"{"sources": [{"name": "g", "provider": "gits", "keyEnv": "K"}], "databse": "x"}"#, "unknown field 'databse' (known: database, deadline, retention, concurrency, lease, sources, watches, watchState)"),
        (#"[1, 2]"#, "the top level must be an object"),
        (#"{"sources": {"name": "g"}}"#, "sources: expected a list"),
        (#"{"sources": [{"name": "g", "provider": "gits", "keyEnv": "K", "baseURL": "ftp://x"}]}"#, "is not an http(s) URL"),
        (#"{"sources": []}"#, "no sources"),
        (#"{"sources": [{"name": "g" "provider": "gits"}]}"#, "is not valid JSON"),
    ])
    func mistakes(json: String, expected: String) {
        let text = message(json, environment: ["K": "key", "TWO": "line1\nline2"],
                           files: ["two.key": "k1\nk2\n", "empty.key": "\n"])
        #expect(text?.contains(expected) == true, "\(text ?? "no error")")
    }

    /// Foundation's JSON5 decoder says only "not valid JSON"; the message must say where and
    /// why, in a file with comments and trailing commas before the mistake, and no value inside
    /// a list or object may surface as a decoding error of Swift's (exit 1).
    @Test("a file that is not JSON: the message gives the line, the column (in characters) and the cause; every kind is a configuration error", arguments: [
        ("{\n  // a comment, with \"quotes\" and a comma,\n  \"concurrency\": 2, /* block\n  comment, */\n  \"sources\": [\n    {\"name\": \"g\", \"provider\": \"gits\",, \"keyEnv\": \"K\"},\n  ],\n}\n",
         "is not valid JSON: line 6, column 38: invalid value (comments, // and /* */, and trailing commas are allowed)"),
        (#"{"sources": [{"name": "g" "provider": "gits"}]}"#, "is not valid JSON: line 1, column 27: invalid value"),
        ("{\"sources\": [{\"name\": \"경기\t\", \"provider\": \"gits\"}]}", "is not valid JSON: line 1, column 26: unescaped control character"),
        ("{\"sources\": [{\"name\": \"g\u{01}\"}]}", "is not valid JSON: line 1, column 25: unescaped control character"),
        (#"{"sources": [{"name": "g\q"}]}"#, "is not valid JSON: line 1, column 25: invalid escape sequence"),
        (#"{"sources": [{"name": "g\ud800"}]}"#, "is not valid JSON: unexpected end of file during string parse (expected low-surrogate code point but did not find one)"),
        (#"{"sources": [{"name": "g", "provider": "gits", "keyEnv": "K"}], "concurrency": 1e400}"#, "is not valid JSON: number 1e400 is not representable in Swift"),
        (#"{"sources": ["#, "is not valid JSON: unexpected end of file"),
        ("", "is not valid JSON"),
    ])
    func notJSON(json: String, expected: String) {
        let text = message(json) ?? "no error"
        #expect(text.contains(expected), "\(text)")
        #expect(!text.contains("DecodingError"), "\(text)")
    }

    /// Foundation's decoder keeps the first of two equal keys without a word; a setting
    /// written twice is an error that names the key and where the second one is, at any depth.
    @Test("a key given twice in one object is an error naming it and its place; the same key in two objects is not", arguments: [
        (#"{"database": "/tmp/a.sqlite", "sources": [{"name": "g", "provider": "gits", "keyEnv": "K"}], "database": "/tmp/b.sqlite"}"#,
         #"line 1, column 94: "database" is given twice in one object; keep one"#),
        ("{\"sources\": [\n  {\"name\": \"경기\", \"provider\": \"gits\", \"keyEnv\": \"K\", \"name\": \"h\"}]}",
         #"line 2, column 53: "name" is given twice in one object; keep one"#),
        (#"{"sources": [{"name": "g", "provider": "gits", "keyEnv": "K", "retry": {"maxRetries": 1, /* "maxRetries": 3, */ "maxRetries": 2}}]}"#,
         #"line 1, column 113: "maxRetries" is given twice in one object; keep one"#),
    ])
    func duplicateKeys(json: String, expected: String) {
        let text = message(json) ?? "no error"
        #expect(text.hasSuffix("config.json: " + expected), "\(text)")
    }

    @Test("the same keys in different objects, in strings and in comments are not duplicates")
    func notDuplicates() throws {
        let c = try load(#"""
            {"sources": [{"name": "g", "provider": "gits", "keyEnv": "K", "baseURL": "http://x/?name=a&name=b"},
                         {"name": "h", "provider": "gits", "keyEnv": "K"}], // "sources": []
             "deadline": "1m"}
            """#)
        #expect(c.sources.map(\.name) == ["g", "h"])
        #expect(message(#"{"database": " ", "sources": [{"name": "g", "provider": "gits", "keyEnv": "K"}]}"#)?
                    .hasSuffix("config.json: database: is empty; give the SQLite file or the PostgreSQL connection string, or remove the field for the default") == true)
    }

    @Test("strictJSON blanks comments and trailing commas only, keeping every byte's offset")
    func strictJSON() {
        // Slashes, stars, commas and brackets inside strings (an escaped quote and backslash
        // too) stay; comments and the commas before ] and } become spaces; newlines stay.
        let json5 = #"""
            {"a//b": "x/*y*/,]\\\"", // c, ]
             "l": [1, 2, /* , */ ], /* x
             */ "m": {"n": 1,},
            }
            """#
        let expected = #"""
            {"a//b": "x/*y*/,]\\\"",        
             "l": [1, 2          ],     
                "m": {"n": 1 } 
            }
            """#
        let strict = String(decoding: ConfigObject.strictJSON(Data(json5.utf8)), as: UTF8.self)
        #expect(strict == expected)
        #expect(strict.utf8.count == json5.utf8.count)
    }

    /// A device or a huge file named by mistake is refused after a bounded read, never read
    /// to the end (`/dev/zero` filled 24 GB before).
    @Test("a configuration or key file that is endless, too large or not UTF-8 is refused after a bounded read")
    func boundedReads() throws {
        func message(_ url: URL) -> String {
            do { _ = try Configuration.load(from: url, environment: [:]); return "no error" } catch { return "\(error)" }
        }
        #expect(message(URL(fileURLWithPath: "/dev/zero")).contains("the configuration file /dev/zero is larger than 1 MB; it must be a JSON text file in UTF-8"))
        let directory = try TestPaths.temporaryDirectory("config")
        let big = directory.appendingPathComponent("big.json")
        try Data(repeating: 0x20, count: (1 << 20) + 1).write(to: big)
        #expect(message(big).contains("is larger than 1 MB"))
        let latin1 = directory.appendingPathComponent("latin1.json")
        try Data([0x7B, 0x22, 0xE9, 0x22, 0x3A, 0x31, 0x7D]).write(to: latin1)
        #expect(message(latin1).contains("latin1.json is not UTF-8 text; it must be a JSON text file in UTF-8"))
        #expect(self.message(#"{"sources": [{"name": "g", "provider": "gits", "keyFile": "/dev/zero"}]}"#)?
                    .contains("the key file /dev/zero (keyFile) is larger than 64 KB; it must hold just the API key on one line") == true)
    }

    @Test("concurrency is read from the file")
    func concurrency() throws {
        let c = try load(#"{"concurrency": 2, "sources": [{"name": "g", "provider": "gits", "keyEnv": "K"}]}"#)
        #expect(c.concurrency == 2)
    }

    @Test("a watch's target: a url, or a command whose program is resolved (relative: the configuration's directory; a bare name: PATH); from: end by default, start, a cursor")
    func watchTargets() throws {
        let directory = try TestPaths.temporaryDirectory("config")
        let script = directory.appendingPathComponent("notify.sh").path
        try "#!/bin/sh\n".write(toFile: script, atomically: true, encoding: .utf8)
        chmod(script, 0o755)
        let url = directory.appendingPathComponent("config.json")
        try #"""
            {"sources": [{"name": "g", "provider": "gits", "keyEnv": "K"}], "watches": [
              {"name": "hook", "url": "https://hooks.example/x", "secretEnv": "S"},
              {"name": "local", "command": ["./notify.sh", "--topic", "roads"], "from": "start"},
              {"name": "path", "command": ["sh", "-c"], "from": 42, "secretEnv": "S"}]}
            """#.write(to: url, atomically: true, encoding: .utf8)
        let watches = try Configuration.load(from: url, environment: ["K": "k", "S": "s3cret", "PATH": "/nonexistent:/bin:/usr/bin"]).watches
        try #require(watches.count == 3)
        #expect(watches.map(\.start) == [.end, .after(0), .after(42)])
        #expect(watches[0].target == .webhook(try #require(URL(string: "https://hooks.example/x"))))
        #expect(watches[1].target == .command([URL(fileURLWithPath: script).standardizedFileURL.path, "--topic", "roads"]))
        #expect(watches[2].target == .command(["/bin/sh", "-c"]))
        #expect(watches[1].secret.isEmpty && watches[2].secret == "s3cret")
        #expect(watches[1].targetDescription == URL(fileURLWithPath: script).standardizedFileURL.path, "the program only, never its arguments")
    }

    @Test("a watch's signature is HMAC-SHA256: RFC 4231 test case 2")
    func watchSignature() {
        #expect(WatchTargets.hmacSHA256(key: "Jefe", Data("what do ya want for nothing?".utf8))
                == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }
}
