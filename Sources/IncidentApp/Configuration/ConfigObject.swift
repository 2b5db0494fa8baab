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
    /// - Throws: ``ConfigurationError`` when they are not JSON or not an object.
    static func parse(_ data: Data, file: String) throws -> ConfigObject {
        let value: ConfigValue
        do {
            let decoder = JSONDecoder()
            decoder.allowsJSON5 = true
            value = try decoder.decode(ConfigValue.self, from: data)
        } catch DecodingError.dataCorrupted(let context) {
            let detail = (context.underlyingError as NSError?)?.userInfo[NSDebugDescriptionErrorKey] as? String
            throw ConfigurationError("\(file) is not valid JSON: \(detail ?? context.debugDescription)")
        }
        guard case .object(let fields) = value else { throw ConfigurationError("\(file): the top level must be an object") }
        return ConfigObject(fields: fields, place: file)
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
