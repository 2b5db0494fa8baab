import Foundation
import IncidentCore
@testable import IncidentFeeds
import TestSupport
import Testing

/// DATEX II as real servers send it beyond the plain forms: gzip files (NDW's `.xml.gz`,
/// served without Content-Encoding) and DATEX II 3 under other namespace URIs (Spain's DGT).
@Suite("DATEX II wire forms")
struct DATEX2WireFormsTests {
    static let finland = TestPaths.sharedFeed("datex2_fi_digitraffic/situation_v3_5_GUID50456943.xml")
    static let ndw = TestPaths.sharedFeed("datex2_nl_ndw/brugopeningen_v3_messagecontainer_20260402_first20.xml")

    /// `bytes` compressed by Debian's gzip (a real gzip file, as NDW's are made).
    static func gzip(_ bytes: Data) throws -> Data {
        let directory = try TestPaths.temporaryDirectory("gzip")
        let file = directory.appendingPathComponent("body")
        try bytes.write(to: file)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/gzip")
        process.arguments = ["-9", "-n", file.path]
        try process.run()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0)
        return try Data(contentsOf: file.appendingPathExtension("gz"))
    }

    static func write(_ data: Data, _ name: String = "body") throws -> URL {
        let url = try TestPaths.temporaryDirectory("feed").appendingPathComponent(name)
        try data.write(to: url)
        return url
    }

    @Test("a gzip file is read as the document it holds, over HTTP content types or as a file; two gzip members in a row too")
    func gzipFile() throws {
        let plain = try Data(contentsOf: Self.ndw)
        let expected = try read(DATEX2Provider.self, Self.ndw)
        #expect(expected.incidents.count == 20)
        let compressed = try Self.write(try Self.gzip(plain), "brugdata.xml.gz")
        for contentType in [nil, "application/gzip", "application/octet-stream", "application/xml; charset=ISO-8859-1"] {
            let result = try read(DATEX2Provider.self, compressed, contentType: contentType)
            #expect(result.incidents == expected.incidents, "\(contentType ?? "file")")
            #expect(result.rejected == expected.rejected)
            #expect(result.verdict == expected.verdict)
        }
        // RFC 1952 §2.2: a file may hold several members, read one after another.
        let half = plain.count / 2
        let members = try Self.write(try Self.gzip(plain.prefix(half)) + Self.gzip(plain.dropFirst(half)))
        #expect(try read(DATEX2Provider.self, members).incidents == expected.incidents)
    }

    @Test("a gzip file that is corrupt, cut short, or holds no DATEX II is refused without quoting its bytes")
    func gzipRefused() throws {
        let compressed = try Self.gzip(try Data(contentsOf: Self.ndw))
        var corrupt = compressed
        for i in 2000..<2100 { corrupt[i] ^= 0x5A }
        let (corruptError, _) = feedError(DATEX2Provider.self, try Self.write(corrupt))
        #expect(corruptError?.kind == .malformedBody)
        #expect(corruptError?.message.hasPrefix("the gzip-compressed body is corrupt (zlib: ") == true, "\(corruptError?.message ?? "")")
        #expect(corruptError?.message.hasSuffix("; nothing was stored") == true)

        let (cutError, _) = feedError(DATEX2Provider.self, try Self.write(compressed.prefix(compressed.count - 100)))
        #expect(cutError?.kind == .malformedBody)
        #expect(cutError?.message.hasPrefix("the gzip-compressed body ends before its gzip stream does (a transfer cut short?) at compressed byte ") == true,
                "\(cutError?.message ?? "")")

        let html = try Self.write(try Self.gzip(Data("<!DOCTYPE html><html><body>Gateway Timeout</body></html>".utf8)))
        #expect(feedError(DATEX2Provider.self, html).error?.message
                    == "expected DATEX II XML (a SituationPublication) in its gzip file but got an HTML page (Content-Type: text/html): '<!DOCTYPE html><html><body>Gateway Timeout</body></html>'; the API or a proxy in front of it is failing: check the base URL and try again later")

        // A provider that reads no gzip names it without quoting the compressed bytes.
        let (wzdx, _) = feedError(WZDxProvider.self, try Self.write(compressed))
        #expect(wzdx?.message == "expected a WZDx GeoJSON feed but got a gzip-compressed body (Content-Type: text/html); the API or a proxy in front of it is failing: check the base URL and try again later")
    }

    @Test("DATEX II 3 under Spain's DGT namespace URIs (http://levelC/schema/3/…) is read as under datex2.eu's")
    func otherNamespaceURIs() throws {
        for sample in [Self.finland, Self.ndw] {
            let text = try String(contentsOf: sample, encoding: .utf8)
            let dgt = text.replacingOccurrences(of: "http://datex2.eu/schema/3/", with: "http://levelC/schema/3/")
            #expect(dgt != text)
            let expected = try read(DATEX2Provider.self, sample)
            let result = try read(DATEX2Provider.self, try temporaryFile(dgt))
            #expect(!expected.incidents.isEmpty)
            #expect(result.incidents == expected.incidents)
            #expect(result.rejected == expected.rejected)
            #expect(result.verdict == expected.verdict)
        }
    }

    @Test("a document in another namespace is refused naming the namespace it found")
    func foreignNamespace() throws {
        let text = try String(contentsOf: Self.finland, encoding: .utf8)
            .replacingOccurrences(of: "http://datex2.eu/schema/3/", with: "http://example.org/traffic/v1/")
        let (error, delivered) = feedError(DATEX2Provider.self, try temporaryFile(text))
        #expect(error?.kind == .unexpectedResponse)
        #expect(error?.message == "expected a DATEX II SituationPublication (d2LogicalModel, d2:payload or mc:messageContainer, plain or in SOAP) but the document (root element <payload in http://example.org/traffic/v1/d2Payload>) holds no payload publication: its namespace http://example.org/traffic/v1/d2Payload is not a DATEX II namespace (http://datex2.eu/schema/2/2_0, http://datex2.eu/schema/3/…, or another URI ending in /schema/3/d2Payload); check the base URL")
        #expect(delivered == 0)
    }
}
