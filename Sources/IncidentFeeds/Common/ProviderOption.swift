/// Options a provider declares for its sources (an ITS `bbox`, `eventType`, …): each with its
/// name, type, default, check and help text. The declaration drives everything else: reading
/// and checking the configuration file (unknown fields and type errors name the field),
/// `check-config`'s OPTIONS column, and docs/operator.md's table of provider options.

/// A value of the configuration file (JSON), as written.
public enum ConfigValue: Equatable, Sendable, Decodable {
    case null
    case bool(Bool)
    case number(Double)
    case text(String)
    case list([ConfigValue])
    case object([String: ConfigValue])

    /// Tries each type in turn; a value of another type moves on to the next, but an error
    /// inside a value of the right type (a string holding a raw control character, a number
    /// out of range, deep inside a list) is thrown as it is, never taken for "not a list".
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        func attempt<T: Decodable>(_ type: T.Type) throws -> T? {
            do { return try container.decode(type) } catch DecodingError.typeMismatch { return nil }
        }
        if container.decodeNil() {
            self = .null
        } else if let value = try attempt(Bool.self) {
            self = .bool(value)
        } else if let value = try attempt(Double.self) {
            self = .number(value)
        } else if let value = try attempt(String.self) {
            self = .text(value)
        } else if let value = try attempt([ConfigValue].self) {
            self = .list(value)
        } else {
            self = .object(try container.decode([String: ConfigValue].self))
        }
    }
}

/// A Swift type that a provider option can hold, and how it is written in the configuration.
/// Text, numbers, whole numbers and lists of numbers conform here; a provider whose option
/// needs another type adds its conformance in its own folder.
public protocol ProviderOptionValue: Sendable, Equatable {
    /// What docs/operator.md and error messages call the type: `text`, `a number`, `a list of numbers`.
    static var typeName: String { get }
    /// The value of `config`, or nil when it is not of this type.
    init?(config: ConfigValue)
    var config: ConfigValue { get }
    /// How `check-config` and docs/operator.md show the value: `all`, `126.76,37.41,127.18,37.7`.
    var displayText: String { get }
}

extension String: ProviderOptionValue {
    public static var typeName: String { "text" }
    public init?(config: ConfigValue) {
        guard case .text(let text) = config else { return nil }
        self = text
    }
    public var config: ConfigValue { .text(self) }
    /// The text; `""` for the empty text, so that it shows (in `check-config` and docs/operator.md).
    public var displayText: String { isEmpty ? "\"\"" : self }
}

extension Double: ProviderOptionValue {
    public static var typeName: String { "a number" }
    public init?(config: ConfigValue) {
        guard case .number(let number) = config, number.isFinite else { return nil }
        self = number
    }
    public var config: ConfigValue { .number(self) }
    public var displayText: String { "\(self)" }
}

extension Int: ProviderOptionValue {
    public static var typeName: String { "a whole number" }
    public init?(config: ConfigValue) {
        guard case .number(let number) = config, let whole = Int(exactly: number) else { return nil }
        self = whole
    }
    public var config: ConfigValue { .number(Double(self)) }
    public var displayText: String { String(self) }
}

extension Array: ProviderOptionValue where Element == Double {
    public static var typeName: String { "a list of numbers" }
    public init?(config: ConfigValue) {
        guard case .list(let items) = config else { return nil }
        let numbers = items.compactMap(Double.init(config:))
        guard numbers.count == items.count else { return nil }
        self = numbers
    }
    public var config: ConfigValue { .list(map(\.config)) }
    public var displayText: String { map(\.displayText).joined(separator: ",") }
}

/// One option of a provider, typed. Read it from a source with `source.options[option]`.
public struct ProviderOption<Value: ProviderOptionValue>: ProviderOptionDeclaration {
    public let name: String
    public let defaultValue: Value
    /// What the option means, for docs/operator.md and `--help`: one sentence, units included.
    public let help: String
    /// What is accepted, when more than the type says (`one of all, ex, its`); nil otherwise.
    public let accepted: String?
    /// The problem with a value of the right type (`must be …`), or nil when it is good.
    public let check: @Sendable (Value) -> String?

    public init(_ name: String, default defaultValue: Value, help: String, accepted: String? = nil,
                check: @escaping @Sendable (Value) -> String? = { _ in nil }) {
        self.name = name
        self.defaultValue = defaultValue
        self.help = help
        self.accepted = accepted
        self.check = check
    }

    public var typeName: String { accepted ?? Value.typeName }
    public var defaultText: String { defaultValue.displayText }

    public func validated(_ config: ConfigValue) throws(ProviderOptionProblem) -> ConfigValue {
        guard let value = Value(config: config) else { throw ProviderOptionProblem("must be \(typeName)") }
        if let problem = check(value) { throw ProviderOptionProblem(problem) }
        return value.config
    }

    public func displayText(_ config: ConfigValue) -> String {
        Value(config: config)?.displayText ?? "?"
    }
}

extension ProviderOption where Value == String {
    /// A text option that takes one of `choices`.
    public static func choice(_ name: String, _ choices: [String], default defaultValue: String, help: String) -> ProviderOption {
        ProviderOption(name, default: defaultValue, help: help, accepted: "one of \(choices.joined(separator: ", "))") { value in
            choices.contains(value) ? nil : "must be one of \(choices.joined(separator: ", "))"
        }
    }
}

/// What the configuration reader, `check-config` and docs/operator.md see of an option, whatever its
/// type.
public protocol ProviderOptionDeclaration: Sendable {
    var name: String { get }
    /// The accepted values: the type, or what the option narrows it to.
    var typeName: String { get }
    var defaultText: String { get }
    var help: String { get }
    /// The value as stored in a ``SourceDefinition``, after its type and check.
    /// - Throws: ``ProviderOptionProblem`` saying what is accepted.
    func validated(_ config: ConfigValue) throws(ProviderOptionProblem) -> ConfigValue
    /// The value as `check-config` shows it.
    func displayText(_ config: ConfigValue) -> String
}

/// Why a value does not fit an option (`must be one of all, ex, its`). The configuration reader
/// adds the file and the field.
public struct ProviderOptionProblem: Error, Equatable, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// The provider options a source sets, checked against their declarations. Unset options read
/// as their defaults.
public struct ProviderOptionValues: Equatable, Sendable {
    private var values: [String: ConfigValue] = [:]

    public init() {}

    /// The option's value: the one set, else its default.
    public subscript<Value>(option: ProviderOption<Value>) -> Value {
        get { values[option.name].flatMap(Value.init(config:)) ?? option.defaultValue }
        set { values[option.name] = newValue.config }
    }

    /// Sets `option` from the configuration file's value.
    /// - Throws: ``ProviderOptionProblem`` when the value does not fit the option.
    public mutating func set(_ option: any ProviderOptionDeclaration, from config: ConfigValue) throws(ProviderOptionProblem) {
        values[option.name] = try option.validated(config)
    }

    /// The value set for the option named `name`, as written; nil when it was not set.
    public func configured(_ name: String) -> ConfigValue? {
        values[name]
    }
}
