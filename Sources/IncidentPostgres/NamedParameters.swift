/// Statements with named parameters (`:name`, as SQLite's), rewritten to libpq's numbered
/// ones (`$1`, `$2`, …) with their values in that order, so that statements are written, and
/// read, by name from the column list instead of by counting placeholders.
///
/// A name is a letter or `_` then letters, digits or `_`; a name used twice is one parameter.
/// Not a parameter: `::type` casts, anything in a string literal (`'…'`), a quoted identifier
/// (`"…"`) or a `--` comment.
enum NamedParameters {
    /// `sql` with each `:name` replaced by `$n`, and the values of the names in `n` order.
    ///
    /// A name without a value is a programmer error (GRDB's "wrong number of statement
    /// arguments"): it stops the process with a message naming it, as a mistyped column name
    /// would fail every run of the statement. Values whose names the statement does not use are
    /// not sent (one set of values can serve several statements).
    static func positional(_ sql: String, _ arguments: [String: PostgresValue]) -> (sql: String, values: [PostgresValue]) {
        let scalars = Array(sql.unicodeScalars)
        var text = String.UnicodeScalarView()
        var order: [String] = []
        var numbers: [String: Int] = [:]
        var index = 0
        func isNameStart(_ c: Unicode.Scalar) -> Bool { c == "_" || ("a"..."z").contains(c) || ("A"..."Z").contains(c) }
        func isNamePart(_ c: Unicode.Scalar) -> Bool { isNameStart(c) || ("0"..."9").contains(c) }
        while index < scalars.count {
            let c = scalars[index]
            switch c {
            case "'", "\"":
                // A literal or quoted identifier, to its closing quote (a doubled quote is one
                // quote inside it: the scan ends it and starts it again).
                let end = scalars[(index + 1)...].firstIndex(of: c) ?? scalars.count - 1
                text.append(contentsOf: scalars[index...end])
                index = end + 1
            case "-" where index + 1 < scalars.count && scalars[index + 1] == "-":
                let end = scalars[index...].firstIndex(of: "\n") ?? scalars.count - 1
                text.append(contentsOf: scalars[index...end])
                index = end + 1
            case ":" where index + 1 < scalars.count && scalars[index + 1] == ":":
                text.append(contentsOf: "::".unicodeScalars)
                index += 2
            case ":" where index + 1 < scalars.count && isNameStart(scalars[index + 1]):
                var end = index + 1
                while end < scalars.count && isNamePart(scalars[end]) { end += 1 }
                let name = String(String.UnicodeScalarView(scalars[(index + 1)..<end]))
                let number: Int
                if let known = numbers[name] {
                    number = known
                } else {
                    order.append(name)
                    number = order.count
                    numbers[name] = number
                }
                text.append(contentsOf: "$\(number)".unicodeScalars)
                index = end
            default:
                text.append(c)
                index += 1
            }
        }
        let values = order.map { name in
            guard let value = arguments[name] else { preconditionFailure("no value for the parameter :\(name) of \(sql)") }
            return value
        }
        return (String(text), values)
    }
}

extension Connection {
    /// Runs one statement with its `:name` parameters bound to `arguments`
    /// (``NamedParameters``), returning all its rows (``query(_:_:context:)``).
    @discardableResult
    func query(_ sql: String, named arguments: [String: PostgresValue], context: String) throws -> Result {
        let (text, values) = NamedParameters.positional(sql, arguments)
        return try query(text, values, context: context)
    }

    /// ``forEachRow(_:_:context:firstBatch:_:)`` with `:name` parameters bound to `arguments`.
    func forEachRow(_ sql: String, named arguments: [String: PostgresValue], context: String, firstBatch: Int32 = 64,
                    _ row: (Result, Int32) throws -> Void) throws {
        let (text, values) = NamedParameters.positional(sql, arguments)
        try forEachRow(text, values, context: context, firstBatch: firstBatch, row)
    }
}
