/// A ``TextTable`` written row by row: the column widths are fitted (``TextTable/layout``) to
/// the header and the first ``sampleRows`` rows, which are then printed; every later row is
/// printed as it comes, each cell cut to its column's width, except the last column, which may
/// use whatever the terminal width leaves it. So memory holds at most the sample, however many
/// rows follow; a later cell wider than any in the sample is cut with `…` like an overlong cell
/// of the sample. With an unlimited width (`Int.max`) nothing is ever cut: a wider later cell
/// pushes the rest of its line to the right.
struct StreamingTable {
    /// How many rows the widths are fitted to.
    static let sampleRows = 100

    let header: [String]
    let maxWidth: Int
    let flexible: [Int]
    let droppable: [Int]
    private var out: OutputBuffer
    private var sample: [[String]] = []
    private var layout: TextTable.Layout?

    init(header: [String], maxWidth: Int, flexible: [Int], droppable: [Int], out: OutputBuffer) {
        self.header = header
        self.maxWidth = maxWidth
        self.flexible = flexible
        self.droppable = droppable
        self.out = out
    }

    mutating func add(_ row: [String]) throws {
        if let layout { return try out.write(TextTable.line(row, layout, cutting: maxWidth != Int.max)) }
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
        var fitted = TextTable.layout(rows, maxWidth: maxWidth, flexible: flexible, droppable: droppable)
        for row in rows { try out.write(TextTable.line(row, fitted)) }
        sample = []
        // Later rows: the last column gets the width the others leave.
        if let last = fitted.widths.indices.last, maxWidth != Int.max {
            let others = fitted.widths.dropLast().reduce(0, +) + 2 * last
            fitted.widths[last] = max(fitted.widths[last], maxWidth - others)
        }
        layout = fitted
    }
}
