import CProcessSignals
import Foundation
import IncidentCore
internal import CXLSX

/// One cell of a spreadsheet row.
enum SheetCell {
    case text(String)
    case number(Double)
    /// A local wall-clock time (an instant shifted by the zone's offset: ``DisplayZone/local(_:)``),
    /// written as a date-time number with the `yyyy-mm-dd hh:mm:ss` format.
    case dateTime(UTCInstant)
    /// A local date (`yyyy-mm-dd`), written as a date number.
    case date(UTCInstant)
    case empty
}

/// An .xlsx workbook (Office Open XML, ECMA-376) written with libxlsxwriter in its constant
/// memory mode: each row goes to a temporary file when the next one starts and strings are
/// written inline, so memory does not depend on the number of rows (libxlsxwriter's
/// "Constant memory mode": rows must come in order, which every writer here does). Each sheet
/// has a bold header row, frozen, with an autofilter over every row written.
/// Numbers are numbers, times are date-time numbers (days since 1899-12-30, the 1900 date
/// system) with a date format, text is UTF-8 as it is (Hangul intact).
final class Workbook {
    /// Excel's longest cell text (characters): "Excel specifications and limits".
    static let maxTextLength = 32_767
    /// Excel's most rows in a sheet; later rows go to a new sheet of the same name and a number.
    static let maxRows = 1_048_576

    private let handle: UnsafeMutablePointer<lxw_workbook>
    private let header: UnsafeMutablePointer<lxw_format>?
    private let dateTimeFormat: UnsafeMutablePointer<lxw_format>?
    private let dateFormat: UnsafeMutablePointer<lxw_format>?
    private var sheet: UnsafeMutablePointer<lxw_worksheet>?
    private var sheetHeader: [String] = []
    private var sheetName = ""
    /// 2, 3, … for the sheets that continue one past ``maxRows``.
    private var part = 1
    private var row: UInt32 = 0
    private var closed = false
    let path: String
    /// `path` registered for removal by the signal handler (``ProcessSignals/removedOnSignal(_:_:)``).
    private let removal: Int32

    /// Starts a workbook in a temporary file (libxlsxwriter writes to a named file), written
    /// when ``close()`` is called and removed when the workbook is released: copy it out first
    /// (``copy(to:)``).
    /// - Throws: ``OutputFailure`` when libxlsxwriter cannot start it, ``LibraryUnavailable``
    ///   when it is not installed.
    init() throws {
        if let failure = LibXLSXWriter.loadFailure() { throw LibraryUnavailable(description: failure) }
        path = NSTemporaryDirectory() + "/incidents-\(getpid())-\(UUID().uuidString).xlsx"
        var options = lxw_workbook_options()
        options.constant_memory = 1
        guard let handle = workbook_new_opt(path, &options) else {
            throw OutputFailure(path: path, reason: "libxlsxwriter could not create the workbook")
        }
        self.handle = handle
        removal = process_signals_remove_on_signal(path)  // libxlsxwriter creates it on close
        header = workbook_add_format(handle)
        format_set_bold(header)
        dateTimeFormat = workbook_add_format(handle)
        format_set_num_format(dateTimeFormat, "yyyy-mm-dd hh:mm:ss")
        dateFormat = workbook_add_format(handle)
        format_set_num_format(dateFormat, "yyyy-mm-dd")
    }

    deinit {
        // A workbook not closed (an error on the way) still frees its memory and temporary files.
        if !closed { _ = workbook_close(handle) }
        unlink(path)
        process_signals_forget(removal)
    }

    /// Starts a sheet named `name` (at most 31 characters; Excel's limit) with `header` as its
    /// first row, frozen.
    func addSheet(_ name: String, header: [String]) throws {
        try finishSheet()
        part = 1
        sheetName = name
        sheetHeader = header
        try startSheet(String(name.prefix(31)))
    }

    private func startSheet(_ name: String) throws {
        guard let sheet = workbook_add_worksheet(handle, name) else {
            throw OutputFailure(path: path, reason: "libxlsxwriter could not add the sheet \(name)")
        }
        self.sheet = sheet
        row = 0
        worksheet_freeze_panes(sheet, 1, 0)
        for (column, title) in sheetHeader.enumerated() {
            try check(worksheet_write_string(sheet, 0, UInt16(column), title, header))
        }
        row = 1
    }

    /// Writes the next row of the current sheet.
    /// - Throws: ``OutputFailure`` when libxlsxwriter cannot write it (a full disk).
    func write(_ cells: [SheetCell]) throws {
        guard sheet != nil else { return }
        if row == UInt32(Self.maxRows) {
            try finishSheet()
            part += 1
            try startSheet("\(sheetName.prefix(25)) \(part)")
        }
        guard let sheet else { return }
        for (index, cell) in cells.enumerated() {
            let column = UInt16(index)
            switch cell {
            case .text(let text):
                let cut = text.unicodeScalars.count > Self.maxTextLength
                    ? String(String.UnicodeScalarView(text.unicodeScalars.prefix(Self.maxTextLength))) : text
                try check(worksheet_write_string(sheet, row, column, cut, nil))
            case .number(let value):
                try check(worksheet_write_number(sheet, row, column, value, nil))
            case .dateTime(let local):
                try check(worksheet_write_number(sheet, row, column, Self.serial(local), dateTimeFormat))
            case .date(let local):
                try check(worksheet_write_number(sheet, row, column, Self.serial(local), dateFormat))
            case .empty:
                break
            }
        }
        row += 1
    }

    /// The 1900-system serial number of a wall-clock time: days since 1899-12-30 (1970-01-01 is
    /// 25569), the time of day as the fraction.
    static func serial(_ local: UTCInstant) -> Double {
        Double(local.secondsSince1970) / 86_400 + 25_569
    }

    /// The autofilter of the current sheet, over the header and every row written.
    private func finishSheet() throws {
        guard let sheet, !sheetHeader.isEmpty else { return }
        try check(worksheet_autofilter(sheet, 0, 0, row - 1, UInt16(sheetHeader.count - 1)))
        self.sheet = nil
    }

    /// Completes the file.
    /// - Throws: ``OutputFailure`` when it cannot be written.
    func close() throws {
        try finishSheet()
        closed = true
        try check(workbook_close(handle))
    }

    private func check(_ result: lxw_error) throws {
        guard result.rawValue != 0 else { return }
        throw OutputFailure(path: path, reason: String(cString: lxw_strerror(result)))
    }
}

/// `--format xlsx`: the fields of `json` as one sheet, `incidents`, in a workbook
/// (``Workbook``): numbers as numbers, each time as a date-time in `--tz` (the column named
/// `started_at (+09:00)`), text as it is. The workbook is built in a temporary file (what
/// libxlsxwriter writes to) and copied to the buffer's sink when finished: a binary format, so
/// the sink must take bytes (a file, an HTTP body), not text for a terminal.
struct XLSXWriter: IncidentWriter {
    private var out: OutputBuffer
    let columns: [IncidentOutput.Column<ListedIncident>]
    let zone: DisplayZone
    private var workbook: Workbook?

    init(_ out: OutputBuffer, withDistance: Bool, zone: DisplayZone) {
        self.out = out
        columns = IncidentOutput.listColumns(withDistance: withDistance)
        self.zone = zone
    }

    private mutating func started() throws -> Workbook {
        if let workbook { return workbook }
        let workbook = try Workbook()
        let placeholder = ListedIncident(StoredIncident.placeholder, query: IncidentQuery(now: UTCInstant(secondsSince1970: 0)))
        try workbook.addSheet("incidents", header: columns.map { column in
            if case .instant = column.value(placeholder) { return "\(column.name) (\(zone.label))" }
            return column.name
        })
        self.workbook = workbook
        return workbook
    }

    mutating func write(_ row: ListedIncident) throws {
        try started().write(columns.map { column in
            switch column.value(row) {
            case .text(let text): text.map(SheetCell.text) ?? .empty
            case .number(let value): value.map(SheetCell.number) ?? .empty
            case .integer(let value): .number(Double(value))
            case .instant(let instant): instant.map { .dateTime(zone.local($0)) } ?? .empty
            case .texts(let texts): texts.isEmpty ? .empty : .text(texts.joined(separator: "; "))
            case .geometry(let geometry): geometry.map { .text($0.geoJSON) } ?? .empty
            }
        })
    }

    mutating func finish() throws {
        let workbook = try started()
        try workbook.close()
        try workbook.copy(to: &out)
    }
}

extension Workbook {
    /// Copies the closed workbook's file into `out` in chunks and flushes it.
    /// - Throws: ``OutputFailure`` when the file cannot be read; what the sink throws.
    func copy(to out: inout OutputBuffer) throws {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw OutputFailure(path: path, reason: "cannot read the workbook just written")
        }
        defer { try? handle.close() }
        while let chunk = try handle.read(upToCount: OutputBuffer.chunkBytes), !chunk.isEmpty {
            try out.write(bytes: chunk)
        }
        try out.flush()
    }
}
