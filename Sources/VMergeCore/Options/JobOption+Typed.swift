import Foundation

extension JobOption {
    /// A row with its value's type: the text doors (the command line, job files, queue specs)
    /// read text into the value through the row; the typed door (the Swift API) sets the value
    /// itself through the same rule and the same store, so nothing goes through text and neither
    /// door has checks of its own.
    package struct Typed<Value: Sendable>: Sendable {
        /// The row as the text doors read it: its name, help, key and report.
        package let row: JobOption
        /// What the value may be; text is read against it too.
        private let rule: ValueRule<Value>
        private let store: @Sendable (Value, inout JobSettings) -> Void

        init(row: JobOption, rule: ValueRule<Value>, store: @escaping @Sendable (Value, inout JobSettings) -> Void) {
            (self.row, self.rule, self.store) = (row, rule, store)
        }

        /// The text doors' way in: the row's.
        package func apply(_ text: String, to settings: inout JobSettings) throws(JobOptionError) {
            try row.apply(text, to: &settings)
        }

        /// Sets `value` when the rule accepts it, or refuses it as `naming`'s door says a refusal,
        /// with the value `shown` as that door writes it ("invalid value 17 for width: ...").
        package func set(
            _ value: Value, shown: String, in settings: inout JobSettings, naming: OptionNaming
        ) throws(JobOptionError) {
            guard rule.accepts(value) else { throw refusal(shown: shown, naming: naming) }
            store(value, &settings)
        }

        /// A value refused in the rule's words: also one of another type with no counterpart here.
        package func refusal(shown: String, naming: OptionNaming) -> JobOptionError {
            JobOptionError(naming.invalid(shown, for: row.name, "expected \(rule.expected)"))
        }
    }

    // MARK: the rows' shapes

    /// A value read from text (`read`: nil when the text is no such value), then held to `rule`:
    /// the one refusal "invalid value '<text>' for '--<name>': expected <rule>".
    static func value<T: Sendable>(
        _ name: String, placeholder: String, help: String, kind: Kind = .number, keyed: Bool = true,
        read: @escaping @Sendable (String) -> T?, rule: ValueRule<T>,
        store: @escaping @Sendable (T, inout JobSettings) -> Void,
        describe: @escaping @Sendable (JobSettings) -> String, reportKey: String,
        report: @escaping @Sendable (JobSettings) -> JSON
    ) -> Typed<T> {
        let row = JobOption(
            name: name, placeholder: placeholder, help: help, kind: kind, keyed: keyed,
            parse: { text, settings throws(JobOptionError) in
                guard let value = read(text), rule.accepts(value) else {
                    throw JobOptionError.invalidValue(text, for: name, expected: rule.expected)
                }
                store(value, &settings)
            },
            describe: describe, reportKey: reportKey, report: report)
        return Typed(row: row, rule: rule, store: store)
    }

    /// A time: one grammar and one wording for every text door (`seconds(ofTime:in:)`), `range`
    /// deciding the range, which a typed value is held to as well.
    static func time(
        _ name: String, placeholder: String, help: String, range: TimeRange,
        store: @escaping @Sendable (Double, inout JobSettings) -> Void,
        describe: @escaping @Sendable (JobSettings) -> String, reportKey: String,
        report: @escaping @Sendable (JobSettings) -> JSON
    ) -> Typed<Double> {
        let row = JobOption(
            name: name, placeholder: placeholder, help: help, kind: .number, keyed: true,
            parse: { text, settings throws(JobOptionError) in store(try time(text, for: name, in: range), &settings) },
            describe: describe, reportKey: reportKey, report: report)
        let rule = ValueRule<Double>(expected: range.description) { !$0.isNaN && range.contains($0) }
        return Typed(row: row, rule: rule, store: store)
    }

    /// A time a job may leave unset (nil).
    static func optionalTime(
        _ name: String, placeholder: String, help: String, range: TimeRange,
        _ path: WritableKeyPath<MergeOptions, Double?> & Sendable, reportKey: String
    ) -> Typed<Double> {
        time(
            name, placeholder: placeholder, help: help, range: range, store: { $1.merge[keyPath: path] = $0 },
            describe: { $0.merge[keyPath: path].map { "\($0)" } ?? "-" }, reportKey: reportKey,
            report: { .number($0.merge[keyPath: path]) })
    }

    /// A number a job may leave unset (nil): plain decimals only, `rule` deciding the range.
    static func optionalNumber(
        _ name: String, placeholder: String, help: String, rule: ValueRule<Double>,
        _ path: WritableKeyPath<MergeOptions, Double?> & Sendable, reportKey: String
    ) -> Typed<Double> {
        value(
            name, placeholder: placeholder, help: help, read: { isPlainNumber($0) ? Double($0) : nil }, rule: rule,
            store: { $1.merge[keyPath: path] = $0 }, describe: { $0.merge[keyPath: path].map { "\($0)" } ?? "-" },
            reportKey: reportKey, report: { .number($0.merge[keyPath: path]) })
    }

    static func flag(
        _ name: String, help: String, keyed: Bool = true, _ path: WritableKeyPath<MergeOptions, Bool> & Sendable
    ) -> Typed<Bool> {
        let row = JobOption(
            name: name, placeholder: nil, help: help, kind: .flag, keyed: keyed,
            parse: { text, settings throws(JobOptionError) in
                switch text {
                case "true": settings.merge[keyPath: path] = true
                case "false": settings.merge[keyPath: path] = false
                default: throw JobOptionError.invalidValue(text, for: name, expected: "true or false")
                }
            },
            describe: { "\($0.merge[keyPath: path])" }, reportKey: name.replacingOccurrences(of: "-", with: "_"),
            report: { .bool($0.merge[keyPath: path]) })
        return Typed(row: row, rule: ValueRule(expected: "true or false") { _ in true }) {
            $1.merge[keyPath: path] = $0
        }
    }

    /// One of the words of `T`'s cases; `inForce` is the value the key and report record.
    /// - Parameter hint: more to say about a refused value ("; for a CRF use --crf 22").
    static func choice<T: RawRepresentable & CaseIterable & Sendable>(
        _ name: String, placeholder: String, help: String, inForce: @escaping @Sendable (JobSettings) -> T,
        store: @escaping @Sendable (T, inout JobSettings) -> Void,
        hint: @escaping @Sendable (String) -> String = { _ in "" }, unkeyedDefault: T? = nil
    ) -> Typed<T> where T.RawValue == String {
        let words = T.allCases.map(\.rawValue)
        let row = JobOption(
            name: name, placeholder: placeholder, help: help, kind: .choice(words), keyed: true,
            unkeyedDefault: unkeyedDefault?.rawValue,
            parse: { text, settings throws(JobOptionError) in
                guard let value = T(rawValue: text) else {
                    let expected = JobOptionError.oneOf(words) + hint(text)
                    throw JobOptionError.invalidValue(text, for: name, expected: expected)
                }
                store(value, &settings)
            },
            describe: { inForce($0).rawValue }, reportKey: name.replacingOccurrences(of: "-", with: "_"),
            report: { .string(inForce($0).rawValue) })
        return Typed(row: row, rule: ValueRule(expected: JobOptionError.oneOf(words)) { _ in true }, store: store)
    }

    static func choice<T: RawRepresentable & CaseIterable & Sendable>(
        _ name: String, placeholder: String, help: String, _ path: WritableKeyPath<MergeOptions, T> & Sendable,
        hint: @escaping @Sendable (String) -> String = { _ in "" }, unkeyedDefault: T? = nil
    ) -> Typed<T> where T.RawValue == String {
        choice(
            name, placeholder: placeholder, help: help, inForce: { $0.merge[keyPath: path] },
            store: { $1.merge[keyPath: path] = $0 }, hint: hint, unkeyedDefault: unkeyedDefault)
    }
}
