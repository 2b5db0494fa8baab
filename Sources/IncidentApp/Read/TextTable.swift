import Foundation
internal import CTerminal
#if canImport(Glibc)
import Glibc
#endif

/// Aligned plain-text tables for people. Widths are display columns (Korean and other East
/// Asian wide characters take two, per glibc's `wcwidth` in a UTF-8 locale), so columns line up
/// in a terminal; the widest columns are truncated with `…` to fit `maxWidth`
/// (``Terminal/width(_:)``: the terminal's width, no limit when output is not a terminal).
enum TextTable {
    /// Renders `rows` (the first is the header) with two spaces between columns, fitting
    /// `maxWidth` (see ``layout(_:maxWidth:flexible:droppable:)``). Cut cells end in `…`.
    static func render(_ rows: [[String]], maxWidth: Int, flexible: [Int] = [], droppable: [Int] = []) -> String {
        let layout = layout(rows, maxWidth: maxWidth, flexible: flexible, droppable: droppable)
        return rows.map { line($0, layout) }.joined()
    }

    /// The columns kept and their widths, for rendering rows one at a time.
    struct Layout: Equatable {
        /// Indexes of the columns kept, into each row.
        var columns: [Int]
        /// Display width of each kept column.
        var widths: [Int]
    }

    /// Fits `rows` (the first is the header) into `maxWidth`: first the `flexible` columns
    /// (free text) are cut, down to 16 columns each; then the `droppable` columns are left
    /// out, in that order; then the flexible columns are cut further; then the widest columns
    /// (never below 6 or their header's width).
    static func layout(_ rows: [[String]], maxWidth: Int, flexible: [Int] = [], droppable: [Int] = []) -> Layout {
        guard let header = rows.first else { return Layout(columns: [], widths: []) }
        var cleaned = rows.map { $0.map(singleLine) }
        var kept = Array(header.indices)
        var dropOrder = droppable.map { header[$0] }
        let flexibleNames = Set(flexible.map { header[$0] })
        while true {
            let columnCount = cleaned[0].count
            var widths = (0..<columnCount).map { column in cleaned.map { displayWidth($0[column]) }.max() ?? 0 }
            let separators = 2 * (columnCount - 1)
            func shrink(_ candidates: [Int], floor: (Int) -> Int) {
                while widths.reduce(0, +) + separators > maxWidth {
                    guard let widest = candidates.max(by: { widths[$0] < widths[$1] }), widths[widest] > floor(widest) else { return }
                    widths[widest] -= 1
                }
            }
            shrink(widths.indices.filter { flexibleNames.contains(cleaned[0][$0]) }, floor: { _ in 16 })
            if widths.reduce(0, +) + separators > maxWidth, !dropOrder.isEmpty,
               let column = cleaned[0].firstIndex(of: dropOrder.removeFirst()) {
                cleaned = cleaned.map { row in var row = row; row.remove(at: column); return row }
                kept.remove(at: column)
                continue
            }
            let floor = { (column: Int) in max(6, displayWidth(cleaned[0][column])) }
            shrink(widths.indices.filter { flexibleNames.contains(cleaned[0][$0]) }, floor: floor)
            shrink(Array(widths.indices), floor: floor)
            return Layout(columns: kept, widths: widths)
        }
    }

    /// One row as a line of `layout`: each kept cell made single-line, cut to its column's
    /// width and padded; trailing spaces removed; ends in a newline.
    static func line(_ row: [String], _ layout: Layout) -> String {
        var line = ""
        for (position, column) in layout.columns.enumerated() {
            let cell = truncate(singleLine(row[column]), to: layout.widths[position])
            line += cell
            if position < layout.columns.count - 1 {
                line += String(repeating: " ", count: max(0, layout.widths[position] - displayWidth(cell)) + 2)
            }
        }
        while let last = line.unicodeScalars.last, last.properties.isWhitespace { line.unicodeScalars.removeLast() }
        return line + "\n"
    }

    /// Control characters (C0, DEL, C1: newlines, tabs, escape sequences) and the Unicode
    /// bidirectional controls (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069, which
    /// reorder what the terminal shows: "Trojan Source", CVE-2021-42574) become spaces, so one
    /// record stays on one line and feed data cannot drive the terminal or disguise a row.
    static func singleLine(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        return String(String.UnicodeScalarView(text.unicodeScalars.map { isControl($0) ? " " : $0 }))
    }

    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || (scalar.value >= 0x61C && scalar.properties.isBidiControl)
    }

    /// Terminal columns `text` occupies.
    static func displayWidth(_ text: String) -> Int {
        Terminal.enableWideCharacterWidths()
        return text.unicodeScalars.reduce(0) { $0 + max(0, Int(wcwidth(wchar_t($1.value)))) }
    }

    /// `text` cut to at most `width` columns, ending in `…` when cut.
    static func truncate(_ text: String, to width: Int) -> String {
        guard displayWidth(text) > width else { return text }
        var out = ""
        var used = 0
        for character in text {
            let w = displayWidth(String(character))
            if used + w > width - 1 { break }
            out.append(character)
            used += w
        }
        return out + "…"
    }
}

/// Facts about the terminal the output goes to.
enum Terminal {
    private static let localeOnce: Void = {
        // wcwidth needs a UTF-8 LC_CTYPE to know Hangul is wide. C.UTF-8 ships with glibc.
        if setlocale(LC_CTYPE, "C.UTF-8") == nil { _ = setlocale(LC_CTYPE, "") }
    }()

    static func enableWideCharacterWidths() { _ = localeOnce }

    /// The width to fit tables to: `$COLUMNS` when set (an explicit request, as `ps` reads it),
    /// else the terminal's width (TIOCGWINSZ) when stdout is a terminal, else `Int.max`:
    /// output to a pipe or a file is never cut and no column is left out.
    static func width(_ environment: [String: String]) -> Int {
        if let columns = environment["COLUMNS"].flatMap(Int.init), columns > 20 { return columns }
        guard isatty(STDOUT_FILENO) == 1 else { return Int.max }
        var size = winsize()
        if ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 20 { return Int(size.ws_col) }
        return 80
    }

    /// Whether the context's stdout is a terminal a person reads (not a pipe or a file):
    /// `list` then shows a page. `$INCIDENTS_INTERACTIVE` (1 or 0) says so instead, for tests.
    static func isInteractive(_ context: Context) -> Bool {
        if let forced = context.environment["INCIDENTS_INTERACTIVE"] { return forced == "1" }
        return context.outputIsTerminal
    }

    /// The rows of a page: the terminal's height (`$LINES` when set, as `$COLUMNS` for the
    /// width, else TIOCGWINSZ) less a header, the footer and a prompt, at least 5; 20 when the
    /// height is unknown.
    static func pageRows(_ environment: [String: String]) -> Int {
        if let lines = environment["LINES"].flatMap(Int.init), lines > 0 { return max(5, lines - 4) }
        var size = winsize()
        if ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_row > 0 { return max(5, Int(size.ws_row) - 4) }
        return 20
    }

    /// ``width(_:)``, or `Int.max` with `--wide` (every column, nothing cut).
    static func width(_ environment: [String: String], wide: Bool) -> Int {
        wide ? Int.max : width(environment)
    }
}
