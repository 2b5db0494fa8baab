import Foundation

/// Debian's `chromium` in headless mode, for tests of HTML pages the product writes: the DOM
/// after the page's scripts ran, and a screenshot. Network is refused (every host name
/// resolves to nothing), so a page's remote resources fail as they would offline.
public enum HeadlessBrowser {
    public static let executable = URL(fileURLWithPath: "/usr/bin/chromium")

    public struct Missing: Error, CustomStringConvertible {
        public var description: String {
            "\(HeadlessBrowser.executable.path) is missing: Scripts/bootstrap installs Debian's chromium for these tests"
        }
    }

    static func run(_ arguments: [String], environment: [String: String] = [:]) async throws -> ProcessResult {
        guard FileManager.default.isExecutableFile(atPath: executable.path) else { throw Missing() }
        let profile = try TestPaths.temporaryDirectory("chromium")
        let process = try RunningProcess(executable, [
            "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
            "--user-data-dir=\(profile.path)", "--host-resolver-rules=MAP * ~NOTFOUND", "--virtual-time-budget=10000",
        ] + arguments, environment: environment)
        let deadline = Date().addingTimeInterval(120)
        while process.process.isRunning && Date() < deadline { try? await Task.sleep(for: .milliseconds(20)) }
        return process.wait(timeout: max(0, deadline.timeIntervalSinceNow))
    }

    /// The serialized DOM of `page` (with `#fragment`) once its scripts have run; `environment`
    /// is added to chromium's (e.g. `FONTCONFIG_FILE`).
    public static func dom(of page: URL, fragment: String? = nil, environment: [String: String] = [:]) async throws -> String {
        let result = try await run(["--dump-dom", page.absoluteString + (fragment.map { "#" + $0 } ?? "")], environment: environment)
        guard result.status == 0 else { throw Failed(result: result) }
        return result.stdout
    }

    /// A PNG screenshot of `page` in a window of `width` × `height` CSS pixels.
    public static func screenshot(of page: URL, to png: URL, width: Int = 1000, height: Int = 700) async throws {
        let result = try await run(["--window-size=\(width),\(height)", "--screenshot=\(png.path)", page.absoluteString])
        guard result.status == 0, FileManager.default.fileExists(atPath: png.path) else { throw Failed(result: result) }
    }

    public struct Failed: Error, CustomStringConvertible {
        public var result: ProcessResult
        public var description: String { "chromium exited \(result.status): \(result.stderr.suffix(600))" }
    }
}

/// Pixel counts of a PNG file, read by Python's zlib (8-bit RGB or RGBA, not interlaced: what
/// Chromium writes): for each colour asked for, how many pixels are within `tolerance` of it
/// on every channel.
public enum PNGColors {
    public static func count(in png: URL, colors: [String], tolerance: Int = 0) async throws -> [String: Int] {
        let program = #"""
        import json, struct, sys, zlib
        data = open(sys.argv[1], "rb").read()
        assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
        pos, idat = 8, b""
        while pos < len(data):
            n, = struct.unpack(">I", data[pos:pos + 4]); kind = data[pos + 4:pos + 8]; chunk = data[pos + 8:pos + 8 + n]; pos += 12 + n
            if kind == b"IHDR": width, height, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", chunk)
            elif kind == b"IDAT": idat += chunk
        assert depth == 8 and interlace == 0 and ctype in (2, 6), (depth, ctype, interlace)
        bpp = 3 if ctype == 2 else 4
        raw, stride, prev, i = zlib.decompress(idat), width * bpp, bytearray(width * bpp), 0
        wanted = [bytes.fromhex(c.lstrip("#")) for c in sys.argv[3:]]
        tol, counts = int(sys.argv[2]), [0] * len(sys.argv[3:])
        for y in range(height):
            kind = raw[i]; i += 1; line = bytearray(raw[i:i + stride]); i += stride
            for x in range(stride):
                a = line[x - bpp] if x >= bpp else 0; b = prev[x]; c = prev[x - bpp] if x >= bpp else 0
                if kind == 1: line[x] = (line[x] + a) & 255
                elif kind == 2: line[x] = (line[x] + b) & 255
                elif kind == 3: line[x] = (line[x] + (a + b) // 2) & 255
                elif kind == 4:
                    p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                    line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
            for x in range(0, stride, bpp):
                for k, w in enumerate(wanted):
                    if abs(line[x] - w[0]) <= tol and abs(line[x + 1] - w[1]) <= tol and abs(line[x + 2] - w[2]) <= tol:
                        counts[k] += 1
            prev = line
        print(json.dumps(dict(zip(sys.argv[3:], counts))))
        """#
        let process = try RunningProcess(URL(fileURLWithPath: "/usr/bin/env"),
                                         ["python3", "-c", program, png.path, String(tolerance)] + colors)
        while process.process.isRunning { try? await Task.sleep(for: .milliseconds(20)) }
        let result = process.wait()
        guard result.status == 0, let counts = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Int] else {
            throw HeadlessBrowser.Failed(result: result)
        }
        return counts
    }
}
