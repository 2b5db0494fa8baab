import Foundation
import TestSupport
import Testing

/// Issue 24, point 6: feed text with Unicode bidirectional controls ("Trojan Source") reached
/// the terminal raw in tables and `show`, and a NUL was written raw into CSV. Read from a real
/// ITS response (`ingest --file`) into SQLite; the stores agree on the stored text
/// (StoreConformanceTests: ControlCharacterTests).
@Suite("End to end: feed text cannot drive or disguise the terminal")
struct TerminalSafetyTests {
    /// Every Bidi_Control character, as JSON escapes in the response.
    static let bidi: [UInt32] = [0x061C, 0x200E, 0x200F, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069]

    @Test("bidirectional controls become spaces in tables and show, \\u escapes in JSON and logs; a NUL is a space, also in CSV")
    func bidiAndNUL() async throws {
        let ws = try Workspace()
        let escapes = Self.bidi.map { String(format: "\\\\u%04x", $0) }.joined(separator: "x")
        let response = try ws.write("its.json", """
            {"header":{"resultCode":0,"resultMsg":"success"},"body":{"totalCount":1,"items":[{"type":"고속도로","eventType":"교통사고",
            "eventDetailType":"추돌사고","startDate":"20240101001500","coordX":"127.0651","coordY":"37.2105","linkId":"1100123400",
            "roadName":"경부선\(escapes)","roadNo":"1","roadDrcType":"종점","lanesBlockType":"","lanesBlocked":"1차로 차단",
            "message":"추돌\\u0000사고 \\u202e처리중\\u202c 끝","endDate":""}]}}
            """)
        let ingest = try await run("incident-scheduler", ["ingest", "--source", "its", "--file", response, "--database", ws.database])
        #expect(ingest.status == 0, "\(ingest.stderr)")
        let bidi = Set(Self.bidi.compactMap(Unicode.Scalar.init))
        func expectNoBidi(_ text: String, _ what: String) {
            #expect(!text.unicodeScalars.contains(where: bidi.contains), "\(what): \(text.debugDescription)")
        }

        let rows = try await ws.listJSON()
        let id = String(try #require(rows.first?["id"] as? Int))
        #expect(rows.first?["description"] as? String == "추돌 사고 \u{202E}처리중\u{202C} 끝", "stored as sent, the NUL a space")
        for arguments in [["list"], ["list", "--wide"], ["show", id], ["stats"], ["runs"], ["list", "--format", "json"], ["show", id, "--format", "json"]] {
            let result = try await run("incidents", arguments + ["--database", ws.database], environment: ["COLUMNS": "400"])
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
            expectNoBidi(result.stdout, "\(arguments)")
            if arguments == ["show", id] { #expect(result.stdout.contains("추돌 사고  처리중  끝"), "\(result.stdout)") }
            if arguments.contains("json") { #expect(result.stdout.contains("\\u202e처리중\\u202c"), "\(result.stdout)") }
        }
        let csv = try await run("incidents", ["list", "--format", "csv", "--database", ws.database])
        #expect(!csv.stdout.contains("\u{0}") && csv.stdout.contains("추돌 사고"), "\(csv.stdout.debugDescription)")

        // Log lines: a provider's error message is repeated in the run's error.
        let broken = try ws.write("broken.json", "{\"header\":{\"resultCode\":\"99\",\"resultMsg\":\"\u{202E}gnorw\u{202C}\"}}")
        let failed = try await run("incident-scheduler", ["ingest", "--source", "its", "--file", broken, "--database", ws.database])
        #expect(failed.status != 0)
        expectNoBidi(failed.stderr, "log")
        #expect(failed.stderr.contains("\\u202egnorw\\u202c"), "\(failed.stderr)")
    }
}
