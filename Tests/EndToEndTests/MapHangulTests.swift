import Foundation
import TestSupport
import Testing

/// The offline map's Hangul is drawn with glyphs, not tofu (issue 20, point 15: bootstrap
/// installs fonts-noto-cjk for it). Measured inside the page in headless Chromium: each Hangul
/// syllable of its heading and its popups is drawn on a canvas in the heading's font and
/// compared with the drawing of U+F0000 (Supplementary Private Use Area-A), which no installed
/// font has: identical pixels mean the syllable came out as that missing-glyph box. Without the
/// CJK font (fontconfig told to reject it), the same check sees every syllable as tofu.
@Suite("End to end: incidents map draws Hangul (headless Chromium)", .serialized)
struct MapHangulTests {
    /// Sets `data-hangul` (the distinct syllables checked), `data-hangul-tofu` (those drawn as
    /// the missing glyph), `data-hangul-blank` (those drawn with no ink) and `data-latin-tofu`
    /// ("A" drawn as the missing glyph: the check's own control) on `<body>`.
    static let check = #"""
    <script>
    (function () {
      var heading = document.querySelector("header h1"), style = getComputedStyle(heading);
      var font = style.fontWeight + " 40px " + style.fontFamily, text = heading.textContent;
      JSON.parse(document.getElementById("incidents").textContent).forEach(function (incident) {
        incident.popup.forEach(function (pair) { text += pair[1]; });
      });
      var syllables = Array.from(new Set(text.match(/[\uAC00-\uD7A3]/g) || []));
      var canvas = document.createElement("canvas");
      canvas.width = 64; canvas.height = 64;
      var context = canvas.getContext("2d", { willReadFrequently: true });
      function drawing(character) {
        context.clearRect(0, 0, 64, 64);
        context.font = font; context.fillStyle = "#000"; context.textBaseline = "top";
        context.fillText(character, 8, 8);
        var pixels = context.getImageData(0, 0, 64, 64).data, alpha = [];
        for (var i = 3; i < pixels.length; i += 4) alpha.push(pixels[i]);
        return alpha.join(",");
      }
      var missing = drawing(String.fromCodePoint(0xF0000));
      document.body.dataset.hangul = String(syllables.length);
      document.body.dataset.hangulTofu = syllables.filter(function (s) { return drawing(s) === missing; }).join("");
      document.body.dataset.hangulBlank = syllables.filter(function (s) { return !/[1-9]/.test(drawing(s)); }).join("");
      document.body.dataset.latinTofu = String(drawing("A") === missing);
    })();
    </script>
    """#

    /// The map of AnalystFixture's incidents on 경부고속도로, offline (`--tiles none`), with the
    /// check added before `</body>`, loaded in headless Chromium with `environment`.
    static func measured(environment: [String: String] = [:]) async throws -> String {
        let (file, result) = try await MapCLITests.map(["--tiles", "none", "--road", "경부고속도로", "--tz", "KST"])
        try #require(result.status == 0, "\(result.stderr)")
        let page = try String(contentsOf: file, encoding: .utf8)
        try #require(page.components(separatedBy: "</body>").count == 2)
        let checked = file.deletingLastPathComponent().appendingPathComponent("hangul.html")
        try page.replacingOccurrences(of: "</body>", with: check + "\n</body>").write(to: checked, atomically: true, encoding: .utf8)
        let dom = try await HeadlessBrowser.dom(of: checked, environment: environment)
        #expect(MapCLITests.attribute("data-ready", in: dom) == "true")
        #expect(dom.contains("<h1>Incidents on 경부고속도로</h1>"), "\(dom.prefix(2000))")
        #expect(MapCLITests.attribute("data-latin-tofu", in: dom) == "false", "the canvas draws a Latin letter apart from the missing glyph")
        return dom
    }

    @Test("every Hangul syllable of the heading and the popups is drawn with a glyph of its own, not the missing-glyph box")
    func glyphs() async throws {
        let dom = try await Self.measured()
        let checked = Int(MapCLITests.attribute("data-hangul", in: dom) ?? "") ?? 0
        // The heading's 경부고속도로 and the accident's popup: 40 distinct syllables.
        #expect(checked == 40, "distinct syllables checked: \(checked)")
        let tofu = MapCLITests.attribute("data-hangul-tofu", in: dom) ?? "?"
        #expect(tofu.isEmpty, "drawn as tofu: \(tofu); is fonts-noto-cjk installed (Scripts/bootstrap)?")
        #expect(MapCLITests.attribute("data-hangul-blank", in: dom) == "", "drawn with no ink")
    }

    /// The check fails where it should: with fontconfig rejecting the Noto CJK fonts (as if
    /// fonts-noto-cjk were not installed), every syllable is the missing glyph.
    @Test("without a CJK font (fontconfig rejects Noto CJK) the check sees every syllable as tofu")
    func tofuWithoutCJKFont() async throws {
        let directory = try TestPaths.temporaryDirectory("fontconfig")
        let config = directory.appendingPathComponent("fonts.conf")
        try """
            <?xml version="1.0"?>
            <!DOCTYPE fontconfig SYSTEM "urn:fontconfig:fonts.dtd">
            <fontconfig>
              <include ignore_missing="no">/etc/fonts/fonts.conf</include>
              <selectfont><rejectfont><glob>*CJK*</glob></rejectfont></selectfont>
              <cachedir>\(directory.appendingPathComponent("cache").path)</cachedir>
            </fontconfig>
            """.write(to: config, atomically: true, encoding: .utf8)
        let dom = try await Self.measured(environment: ["FONTCONFIG_FILE": config.path])
        let checked = Int(MapCLITests.attribute("data-hangul", in: dom) ?? "") ?? 0
        let tofu = MapCLITests.attribute("data-hangul-tofu", in: dom) ?? ""
        #expect(checked == 40 && tofu.count == checked, "\(tofu.count) of \(checked) syllables drawn as tofu")
    }
}
