/// A ``TextTable`` written row by row: the columns kept and their widths are fitted
/// (``TextTable/layout(_:maxWidth:flexible:droppable:)``) to the header and the first
/// ``sampleRows`` rows, which are then printed exactly as ``TextTable/render`` would; every
/// later row is printed as it comes, aligned to those widths. So memory holds at most the
/// sample, however many rows follow.
///
/// A later cell wider than its column is cut with `…`, like an overlong cell of the sample,
/// except in the `uncut` columns (ids, distances), which are written whole and push the rest
/// of their line to the right. The last column takes what the width leaves, so a later line
/// never exceeds `maxWidth` unless its uncut cells alone do. With an unlimited width
/// (`Int.max`) nothing is ever cut.
struct StreamingTable {
    /// How many rows the widths are fitted to.
    static let sampleRows = 100

    let header: [String]
    let maxWidth: Int
    let flexible: [Int]
    let droppable: [Int]
    /// Columns whose cells are never cut.
    let uncut: Set<Int>
    private var out: OutputBuffer
    private var sample: [[String]] = []
    private var layout: TextTable.Layout?

    init(header: [String], maxWidth: Int, flexible: [Int], droppable: [Int], uncut: Set<Int> = [], out: OutputBuffer) {
        self.header = header
        self.maxWidth = maxWidth
        self.flexible = flexible
        self.droppable = droppable
        self.uncut = uncut
        self.out = out
    }

    mutating func add(_ row: [String]) throws {
        if let layout { return try out.write(line(row, layout)) }
        sample.append(row)
        if sample.count == Self.sampleRows { try settle() }
    }

    /// Prints the table if it has fewer rows than the sample; flushes.
    mutating func finish() throws {
        if layout == nil { try settle() }
        try out.flush()
    }

    private mutating func settle() throws {
        let rows = [header] + sample
        let fitted = TextTable.layout(rows, maxWidth: maxWidth, flexible: flexible, droppable: droppable)
        for row in rows { try out.write(TextTable.line(row, fitted)) }
        sample = []
        layout = fitted
    }

    /// A row after the sample.
    private func line(_ row: [String], _ layout: TextTable.Layout) -> String {
        let bounded = maxWidth != Int.max
        var line = ""
        var used = 0, alignedEnd = 0
        for (position, column) in layout.columns.enumerated() {
            let text = TextTable.singleLine(row[column])
            let isLast = position == layout.columns.count - 1
            let room = isLast ? max(1, maxWidth - used) : layout.widths[position]
            let cell = !bounded || uncut.contains(column) ? text : TextTable.truncate(text, to: room)
            line += cell
            used += TextTable.displayWidth(cell)
            if !isLast {
                alignedEnd += layout.widths[position]
                let pad = max(0, alignedEnd - used) + 2
                line += String(repeating: " ", count: pad)
                used += pad
                alignedEnd += 2
            }
        }
        while let last = line.unicodeScalars.last, last.properties.isWhitespace { line.unicodeScalars.removeLast() }
        return line + "\n"
    }
}
