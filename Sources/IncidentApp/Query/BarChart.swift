/// Horizontal bars for the terminal: one line per count, `LABEL  ████▌ 12`, fitted to a width.
enum BarChart {
    /// Eighths of a block, for bar ends finer than one column (U+258F…U+2589).
    static let eighths = ["", "▏", "▎", "▍", "▌", "▋", "▊", "▉"]

    /// The width of a chart that is not written to a terminal (``Terminal/width(_:)`` is
    /// unlimited then, and a bar needs a scale).
    static let unlimitedWidth = 80

    /// `rows` under `title`, each bar as long as its count relative to the largest (a count
    /// above zero always shows at least an eighth of a column). Labels longer than a third of
    /// `width` are cut with `…`; every line fits `width` display columns (at least 20;
    /// ``unlimitedWidth`` for `Int.max`).
    static func render(_ rows: [(label: String, count: Int)], title: String, width: Int) -> String {
        let width = width == Int.max ? unlimitedWidth : max(20, width)
        let labels = rows.map { TextTable.singleLine($0.label) }
        let labelWidth = min(width / 3, labels.map(TextTable.displayWidth).max() ?? 0)
        let countWidth = rows.map { String($0.count).count }.max() ?? 1
        let barWidth = max(1, width - labelWidth - 2 - 1 - countWidth)
        let largest = rows.map(\.count).max() ?? 0
        var out = TextTable.truncate(TextTable.singleLine(title), to: width) + "\n"
        for (label, row) in zip(labels, rows) {
            let cell = TextTable.truncate(label, to: labelWidth)
            var eighthsLong = largest == 0 ? 0 : Int((Double(row.count) * Double(barWidth * 8) / Double(largest)).rounded())
            if row.count > 0 { eighthsLong = max(1, eighthsLong) }
            let bar = String(repeating: "█", count: eighthsLong / 8) + eighths[eighthsLong % 8]
            out += cell + String(repeating: " ", count: labelWidth - TextTable.displayWidth(cell) + 2) + bar
                + (bar.isEmpty ? "" : " ") + String(row.count) + "\n"
        }
        return out
    }
}
