import VMergeCore

/// One metric family in Prometheus's text exposition format (version 0.0.4): its HELP and TYPE
/// lines and its samples. Names are the code's own and are checked (a bad one is a bug, and
/// stops the program); label values come from outside and are escaped.
package struct MetricFamily: Sendable {
    package enum Kind: String, Sendable { case counter, gauge, histogram }

    package let name: String
    package let help: String
    package let kind: Kind
    /// Each series' lines, by its label text: rendered once, sorted when the text is made.
    private var series: [String: [String]] = [:]

    package init(_ name: String, kind: Kind, help: String) {
        precondition(MetricFamily.isMetricName(name), "bad metric name \(name)")
        precondition(kind != .counter || name.hasSuffix("_total"), "a counter's name ends in _total: \(name)")
        self.name = name
        self.kind = kind
        self.help = help
    }

    /// A counter's or gauge's sample for `labels`.
    package mutating func add(_ value: Double, labels: [String: String] = [:]) {
        precondition(kind != .histogram, "\(name) is a histogram")
        let text = MetricFamily.labelText(labels)
        series[text] = ["\(name)\(text) \(MetricFamily.number(value))"]
    }

    /// A histogram's series for `labels`: the count of observations at or below each upper bound
    /// (cumulative, as the format has them), their sum and count; the +Inf bucket is the count.
    package mutating func addHistogram(
        buckets: [(upperBound: Double, count: UInt64)], sum: Double, count: UInt64, labels: [String: String] = [:]
    ) {
        precondition(kind == .histogram, "\(name) is not a histogram")
        precondition(labels["le"] == nil, "le is the histogram's own label")
        var lines: [String] = []
        for bucket in buckets.sorted(by: { $0.upperBound < $1.upperBound }) where bucket.upperBound.isFinite {
            var withBound = labels
            withBound["le"] = MetricFamily.number(bucket.upperBound)
            lines.append("\(name)_bucket\(MetricFamily.labelText(withBound)) \(bucket.count)")
        }
        var infinite = labels
        infinite["le"] = "+Inf"
        lines.append("\(name)_bucket\(MetricFamily.labelText(infinite)) \(count)")
        let text = MetricFamily.labelText(labels)
        lines.append("\(name)_sum\(text) \(MetricFamily.number(sum))")
        lines.append("\(name)_count\(text) \(count)")
        series[text] = lines
    }

    /// HELP, TYPE, then the samples in the order of their label text.
    var text: String {
        var lines = ["# HELP \(name) \(MetricFamily.escapedHelp(help))", "# TYPE \(name) \(kind.rawValue)"]
        for key in series.keys.sorted() { lines += series[key] ?? [] }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `{a="x",b="y"}` with the names sorted, or "" for none.
    static func labelText(_ labels: [String: String]) -> String {
        if labels.isEmpty { return "" }
        let pairs = labels.keys.sorted().map { name -> String in
            precondition(isLabelName(name), "bad label name \(name)")
            return "\(name)=\"\(escapedLabelValue(labels[name] ?? ""))\""
        }
        return "{" + pairs.joined(separator: ",") + "}"
    }

    /// A label value as the format needs it: backslash, double quote and line feed escaped. The
    /// format is UTF-8 with no escape for a byte, so a byte of a name that is not UTF-8
    /// (`FileName`'s U+10FF80-U+10FFFF) is shown as U+FFFD: the value reads as text, and such
    /// names may then look alike.
    package static func escapedLabelValue(_ value: String) -> String {
        var out = ""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            case _ where FileName.isEscapedByte(scalar): out.unicodeScalars.append("\u{FFFD}")
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// HELP text escapes only backslash and line feed.
    static func escapedHelp(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\n", with: "\\n")
    }

    /// A sample value: whole numbers without a fraction, infinities and NaN as the format spells them.
    static func number(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }

    static func isMetricName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, first.isASCIILetter || first == "_" || first == ":" else {
            return false
        }
        return name.unicodeScalars.allSatisfy { $0.isASCIILetter || $0.isASCIIDigit || $0 == "_" || $0 == ":" }
    }

    /// `[a-zA-Z_][a-zA-Z0-9_]*`, not starting with `__` (reserved for Prometheus).
    static func isLabelName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, first.isASCIILetter || first == "_", !name.hasPrefix("__") else {
            return false
        }
        return name.unicodeScalars.allSatisfy { $0.isASCIILetter || $0.isASCIIDigit || $0 == "_" }
    }
}

/// A whole scrape: families in name order, each once.
package struct MetricsText: Sendable {
    /// The Content-Type of the text format.
    package static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    private var families: [String: MetricFamily] = [:]

    package init() {}

    package mutating func append(_ family: MetricFamily) {
        precondition(families[family.name] == nil, "\(family.name) is there twice")
        families[family.name] = family
    }

    package var text: String { families.keys.sorted().compactMap { families[$0]?.text }.joined() }
}

extension Unicode.Scalar {
    fileprivate var isASCIILetter: Bool { ("a"..."z").contains(self) || ("A"..."Z").contains(self) }
    fileprivate var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
