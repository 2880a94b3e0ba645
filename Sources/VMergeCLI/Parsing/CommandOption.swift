import Foundation
import VMergeCore

/// One option of a command, declared once: its row (names, placeholder, help, value kind: what
/// tokenizing, help, completions, the man page and messages read) and how its value is read from
/// the command line, typed. A command's table is its options' rows, and its `init` reads each
/// through the same value, so the two cannot drift apart.
struct CommandOption<Value>: Sendable {
    let spec: OptionSpec
    private let reader: @Sendable (ParsedArguments, OptionSpec) throws -> Value

    init(_ spec: OptionSpec, read: @escaping @Sendable (ParsedArguments, OptionSpec) throws -> Value) {
        self.spec = spec
        reader = read
    }

    /// Its value in `parsed`, checked; every refusal in the one wording (`UsageError.invalidValue`).
    func read(_ parsed: ParsedArguments) throws -> Value { try reader(parsed, spec) }

    var long: String { spec.long }
}

extension CommandOption where Value == Bool {
    /// A flag's row read as present or not.
    init(flag spec: OptionSpec) {
        self.init(spec) { $0.flags.contains($1.long) }
    }

    /// Present or not.
    static func flag(_ long: String, short: Character? = nil, help: String) -> Self {
        Self(OptionSpec(long: long, short: short, value: nil, help: help)) { $0.flags.contains($1.long) }
    }
}

extension CommandOption where Value == String? {
    /// Its value (the last, for one given more than once where that is allowed), or nil; with
    /// `empty`, an empty value is refused saying that.
    static func text(
        _ long: String, short: Character? = nil, value: String, help: String, kind: OptionSpec.ValueKind = .text,
        empty: String? = nil
    ) -> Self {
        Self(OptionSpec(long: long, short: short, value: value, help: help, kind: kind)) { parsed, spec in
            guard let text = parsed.values[spec.long]?.last else { return nil }
            if let empty, text.isEmpty { throw UsageError(description: empty) }
            return text
        }
    }
}

extension CommandOption where Value == [String] {
    /// Every value given, in order (a repeatable option).
    static func repeated(_ long: String, value: String, help: String, kind: OptionSpec.ValueKind = .text) -> Self {
        Self(OptionSpec(long: long, short: nil, value: value, help: help, kind: kind, repeatable: true)) {
            $0.values[$1.long] ?? []
        }
    }
}

extension CommandOption where Value == Int? {
    /// A whole number in `range`, or nil when not given.
    static func integer(
        _ long: String, short: Character? = nil, value: String = "n", help: String, in range: ClosedRange<Int>
    ) -> Self {
        integer(OptionSpec(long: long, short: short, value: value, help: help, kind: .number), in: range)
    }

    /// The same for a row declared elsewhere (a shared one).
    static func integer(_ spec: OptionSpec, in range: ClosedRange<Int>) -> Self {
        Self(spec) { parsed, spec in
            guard let text = parsed.values[spec.long]?.last else { return nil }
            guard let number = Int(text), range.contains(number) else {
                throw UsageError.invalidValue(
                    text, for: spec.long, expected: "a number from \(range.lowerBound) to \(range.upperBound)")
            }
            return number
        }
    }
}

extension CommandOption where Value == Double? {
    /// Seconds in `range`, as every duration option reads them (2, 0.5, 1:30), or nil.
    static func seconds(_ long: String, value: String = "seconds", help: String, in range: ClosedRange<Double>) -> Self
    {
        Self(OptionSpec(long: long, short: nil, value: value, help: help, kind: .number)) { parsed, spec in
            guard let text = parsed.values[spec.long]?.last else { return nil }
            do throws(TimeRefusal) {
                return try JobOption.seconds(ofTime: text, in: TimeRange(range))
            } catch {
                throw UsageError(description: error.of(text, option: spec.long).description)
            }
        }
    }
}

extension CommandOption {
    /// One of the words `T` has, or nil when not given.
    static func choice<T: RawRepresentable & CaseIterable & Sendable>(
        _ long: String, value: String, help: String, of _: T.Type
    ) -> Self where Value == T?, T.RawValue == String {
        let words = T.allCases.map(\.rawValue)
        return choice(OptionSpec(long: long, short: nil, value: value, help: help, kind: .choice(words)), of: T.self)
    }

    /// The same for a row declared elsewhere (a shared one).
    static func choice<T: RawRepresentable & CaseIterable & Sendable>(_ spec: OptionSpec, of _: T.Type) -> Self
    where Value == T?, T.RawValue == String {
        let words = T.allCases.map(\.rawValue)
        return Self(spec) { parsed, spec in
            guard let text = parsed.values[spec.long]?.last else { return nil }
            if let value = T(rawValue: text) { return value }
            throw UsageError.invalidValue(text, for: spec.long, expected: JobOptionError.oneOf(words))
        }
    }

    /// The same row read another way: a value of the command's own checked from the plain one.
    func map<T>(_ transform: @escaping @Sendable (Value, OptionSpec) throws -> T) -> CommandOption<T> {
        let reader = self.reader
        return CommandOption<T>(spec) { parsed, spec in try transform(try reader(parsed, spec), spec) }
    }
}

extension ParsedArguments {
    /// The one positional argument, named `what` in the refusal ("batch: no job list or folder
    /// given", "... one job list or folder, not 2").
    func single(_ what: String, of command: String) throws -> String {
        guard positionals.count == 1 else {
            throw UsageError(
                description: positionals.isEmpty
                    ? "\(command): no \(what) given" : "\(command): one \(what), not \(positionals.count)")
        }
        return positionals[0]
    }
}
