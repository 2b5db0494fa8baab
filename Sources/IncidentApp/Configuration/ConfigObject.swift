import Foundation
import IncidentFeeds

/// One JSON object of the configuration file, read field by field with errors that name the
/// file, the field and what is expected (`config.json: sources[1] (its-seoul): timeout:
/// expected text`).
struct ConfigObject {
    let fields: [String: ConfigValue]
    /// Where the object is, for messages: `config.json: sources[1] (its-seoul)`.
    let place: String

    init(fields: [String: ConfigValue], place: String) {
        self.fields = fields
        self.place = place
    }

    /// `value` as an object.
    /// - Throws: ``ConfigurationError`` when it is not an object.
    init(_ value: ConfigValue, place: String) throws {
        guard case .object(let fields) = value else { throw ConfigurationError("\(place) must be an object") }
        self.init(fields: fields, place: place)
    }

    /// Parses a configuration file's bytes: JSON (RFC 8259), with the comments (`//`, `/* */`)
    /// and trailing commas of JSON5 allowed, so that a configuration can explain itself.
    /// - Throws: ``ConfigurationError`` when they are not JSON (naming the line and column and
    ///   what is wrong there) or not an object.
    static func parse(_ data: Data, file: String) throws -> ConfigObject {
        let value: ConfigValue
        do {
            let decoder = JSONDecoder()
            decoder.allowsJSON5 = true
            value = try decoder.decode(ConfigValue.self, from: data)
        } catch let error as DecodingError {
            throw ConfigurationError("\(file) is not valid JSON\(syntaxError(data, decoding: error)) (comments, // and /* */, and trailing commas are allowed)")
        }
        guard case .object(let fields) = value else { throw ConfigurationError("\(file): the top level must be an object") }
        // The decoder keeps the first of two equal keys without a word: a setting written twice
        // (a copied source block, a forgotten line) would silently be half ignored.
        if let duplicate = duplicateKey(in: strictJSON(data)) {
            throw ConfigurationError("\(file): line \(duplicate.line), column \(duplicate.column): \"\(duplicate.key)\" is given twice in one object; keep one")
        }
        return ConfigObject(fields: fields, place: file)
    }

    /// The first key that occurs twice in one object of `json` (strict JSON, as
    /// ``strictJSON(_:)`` makes it), with the line and column (in characters) of its second
    /// occurrence; keys compared as written.
    static func duplicateKey(in json: [UInt8]) -> (key: String, line: Int, column: Int)? {
        var objects: [(keys: Set<ArraySlice<UInt8>>, expectingKey: Bool)?] = []  // nil: an array
        var line = 1, lineStart = 0, i = 0
        while i < json.count {
            switch json[i] {
            case UInt8(ascii: "{"): objects.append((keys: [], expectingKey: true))
            case UInt8(ascii: "["): objects.append(nil)
            case UInt8(ascii: "}"), UInt8(ascii: "]"): _ = objects.popLast()
            case UInt8(ascii: ","): if objects.last??.expectingKey == false { objects[objects.count - 1]?.expectingKey = true }
            case UInt8(ascii: "\n"): line += 1; lineStart = i + 1
            case UInt8(ascii: "\""):
                let start = i
                i += 1
                while i < json.count, json[i] != UInt8(ascii: "\"") { i += json[i] == UInt8(ascii: "\\") ? 2 : 1 }
                let key = json[(start + 1)..<min(i, json.count)]
                if var object = objects.last ?? nil, object.expectingKey {
                    if object.keys.contains(key) {
                        let column = String(decoding: json[lineStart..<start], as: UTF8.self).count + 1
                        return (String(decoding: key, as: UTF8.self), line, column)
                    }
                    object.keys.insert(key)
                    object.expectingKey = false
                    objects[objects.count - 1] = object
                }
            default: break
            }
            i += 1
        }
        return nil
    }

    /// Where and why `data` is not JSON: `: line 3, column 41: invalid value`. Foundation's JSON5
    /// decoder says neither (its error is only "The given data was not valid JSON"), so the
    /// bytes are read again by `JSONSerialization`, which names the byte offset of the first
    /// error in strict JSON, with the comments and trailing commas JSON5 allows turned into
    /// spaces first (``strictJSON(_:)``, which keeps every byte's offset).
    static func syntaxError(_ data: Data, decoding error: DecodingError) -> String {
        var detail: String?
        if case .dataCorrupted(let context) = error {
            detail = (context.underlyingError as NSError?)?.userInfo[NSDebugDescriptionErrorKey] as? String
        }
        let strict = Data(strictJSON(data))
        do {
            _ = try JSONSerialization.jsonObject(with: strict, options: [.fragmentsAllowed])
        } catch let nsError as NSError {
            let text = nsError.userInfo[NSDebugDescriptionErrorKey] as? String ?? ""
            // "Invalid value around character 57." / "Unescaped control character around character 24."
            if let range = text.range(of: #" around character (\d+)\.?$"#, options: .regularExpression),
               let offset = Int(text[range].filter(\.isNumber)), offset <= strict.count {
                let before = strict.prefix(offset)
                let line = before.reduce(1) { $1 == UInt8(ascii: "\n") ? $0 + 1 : $0 }
                let lineStart = before.lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? before.startIndex
                let column = String(decoding: before[lineStart...], as: UTF8.self).count + 1
                return ": line \(line), column \(column): \(text[..<range.lowerBound].lowercased())"
            }
            detail = text.isEmpty ? detail : text
        }
        // "Unexpected end of file during JSON parse." → ": unexpected end of file during JSON parse"
        return detail.map { ": " + $0.prefix(1).lowercased() + $0.dropFirst().trimmingCharacters(in: CharacterSet(charactersIn: ".")) } ?? ""
    }

    /// `data` with its `//` and `/* */` comments and its trailing commas (a comma followed by
    /// `]` or `}`) replaced by spaces, newlines kept, so that byte offsets are unchanged. Strings
    /// are skipped whole (their escapes included).
    static func strictJSON(_ data: Data) -> [UInt8] {
        var bytes = [UInt8](data)
        let space = UInt8(ascii: " "), newline = UInt8(ascii: "\n"), slash = UInt8(ascii: "/"), star = UInt8(ascii: "*")
        var comma: Int?
        var i = 0
        func blank(_ index: Int) { if bytes[index] != newline { bytes[index] = space } }
        while i < bytes.count {
            switch bytes[i] {
            case UInt8(ascii: "\""):
                i += 1
                while i < bytes.count, bytes[i] != UInt8(ascii: "\"") { i += bytes[i] == UInt8(ascii: "\\") ? 2 : 1 }
                comma = nil
            case slash where i + 1 < bytes.count && bytes[i + 1] == slash:
                while i < bytes.count, bytes[i] != newline { blank(i); i += 1 }
            case slash where i + 1 < bytes.count && bytes[i + 1] == star:
                blank(i); blank(i + 1); i += 2
                while i < bytes.count, !(bytes[i] == star && i + 1 < bytes.count && bytes[i + 1] == slash) { blank(i); i += 1 }
                if i < bytes.count { blank(i); blank(i + 1); i += 1 }
            case UInt8(ascii: ","):
                comma = i
            case UInt8(ascii: "]"), UInt8(ascii: "}"):
                if let trailing = comma { bytes[trailing] = space }
                comma = nil
            case space, newline, UInt8(ascii: "\t"), UInt8(ascii: "\r"):
                break
            default:
                comma = nil
            }
            i += 1
        }
        return bytes
    }

    /// Refuses any field not in `known`, so that a typo (`keyenv`) is an error rather than a
    /// silently missing setting.
    func refuseUnknownFields(known: [String], what: String = "") throws {
        if let unknown = fields.keys.sorted().first(where: { !known.contains($0) }) {
            throw ConfigurationError("\(place): unknown field '\(unknown)'\(what) (known: \(known.joined(separator: ", ")))")
        }
    }

    /// A field's value when present and not null.
    subscript(_ name: String) -> ConfigValue? {
        guard let value = fields[name], value != .null else { return nil }
        return value
    }

    func text(_ name: String) throws -> String? {
        try typed(name, "text", String.init(config:))
    }

    func number(_ name: String) throws -> Double? {
        try typed(name, "a number", Double.init(config:))
    }

    func integer(_ name: String) throws -> Int? {
        try typed(name, "a whole number", Int.init(config:))
    }

    func list(_ name: String) throws -> [ConfigValue]? {
        try typed(name, "a list") { if case .list(let items) = $0 { items } else { nil } }
    }

    func object(_ name: String) throws -> ConfigObject? {
        guard let value = self[name] else { return nil }
        guard case .object(let fields) = value else { throw problem(name, "expected an object") }
        return ConfigObject(fields: fields, place: "\(place): \(name)")
    }

    /// A text field that must be present.
    func requiredText(_ name: String) throws -> String {
        guard let text = try text(name) else { throw ConfigurationError("\(place): missing field '\(name)'") }
        return text
    }

    /// A field read as one of `Choice`'s raw values.
    func choice<Choice: RawRepresentable & CaseIterable>(_ name: String, _ type: Choice.Type) throws -> Choice? where Choice.RawValue == String {
        guard let text = try text(name) else { return nil }
        guard let choice = Choice(rawValue: text) else {
            throw problem(name, "expected one of \(Choice.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return choice
    }

    /// A duration field (`90s`, `15m`, `2h`, `7d`), in seconds.
    func duration(_ name: String) throws -> Int64? {
        guard let text = try text(name) else { return nil }
        do {
            return try ValueParsers.duration(text)
        } catch let error as UsageError {
            throw problem(name, error.message)
        }
    }

    /// The error for field `name`: `PLACE: NAME: DETAIL`.
    func problem(_ name: String, _ detail: String) -> ConfigurationError {
        ConfigurationError("\(place): \(name): \(detail)")
    }

    private func typed<Value>(_ name: String, _ what: String, _ convert: (ConfigValue) -> Value?) throws -> Value? {
        guard let value = self[name] else { return nil }
        guard let typed = convert(value) else { throw problem(name, "expected \(what)") }
        return typed
    }
}
