import Foundation
package import VMergeCore

/// A ``MergeJob`` property bound to the job option it sets: the property's name, and how its
/// typed value reaches the option's row (`JobOption.Typed`), which checks it by the rule the
/// command line reads the option's text against and stores it where that text goes.
package struct OptionProperty: Sendable {
    /// The option's row.
    package let option: JobOption
    /// The property's name, as refusals and the merge's messages say it.
    package let name: String
    /// For a choice, the words of the property's public type's cases; nil for any other option.
    package let words: [String]?
    private let setter: @Sendable (MergeJob, inout JobSettings, OptionNaming) throws(JobOptionError) -> Void

    /// Sets the job's value, if it has one, into `settings`, or refuses it naming the property.
    func set(from job: MergeJob, into settings: inout JobSettings) throws(JobOptionError) {
        try setter(job, &settings, MergeJob.naming)
    }

    /// A property of its own type, converted to the row's; a value with no counterpart there
    /// (`convert` gives nil) is refused in the row's words. Unset (nil), the default stays.
    static func converted<Value: Sendable, RowValue: Sendable>(
        _ name: String, _ path: KeyPath<MergeJob, Value?> & Sendable, _ row: JobOption.Typed<RowValue>,
        words: [String]? = nil, _ convert: @escaping @Sendable (Value) -> RowValue?
    ) -> OptionProperty {
        OptionProperty(option: row.row, name: name, words: words) { job, settings, naming throws(JobOptionError) in
            guard let value = job[keyPath: path] else { return }
            // Written as the property's value, not the option's text: 29.97, 4:3.
            let shown = (value as? Double).map(formatDecimal) ?? "\(value)"
            guard let converted = convert(value) else { throw row.refusal(shown: shown, naming: naming) }
            try row.set(converted, shown: shown, in: &settings, naming: naming)
        }
    }

    /// A property of the row's own type.
    static func same<Value: Sendable>(
        _ name: String, _ path: KeyPath<MergeJob, Value?> & Sendable, _ row: JobOption.Typed<Value>
    ) -> OptionProperty {
        converted(name, path, row) { $0 }
    }

    /// A public enum whose cases are the row's words (OptionPropertyTests holds them to each other).
    static func choice<Value: RawRepresentable & CaseIterable & Sendable, RowValue: RawRepresentable & Sendable>(
        _ name: String, _ path: KeyPath<MergeJob, Value?> & Sendable, _ row: JobOption.Typed<RowValue>
    ) -> OptionProperty where Value.RawValue == String, RowValue.RawValue == String {
        converted(name, path, row, words: Value.allCases.map(\.rawValue)) { RowValue(rawValue: $0.rawValue) }
    }

    /// A switch: always set, off unless turned on.
    static func flag(
        _ name: String, _ path: KeyPath<MergeJob, Bool> & Sendable, _ row: JobOption.Typed<Bool>
    ) -> OptionProperty {
        OptionProperty(option: row.row, name: name, words: nil) { job, settings, naming throws(JobOptionError) in
            try row.set(job[keyPath: path], shown: "\(job[keyPath: path])", in: &settings, naming: naming)
        }
    }
}

extension MergeJob {
    /// The job options this API has, each as its property, in the order they are checked (the
    /// first refused is the one said). Every row of `JobOption.all` is here or in
    /// ``optionsLeftOut``; OptionPropertyTests holds both lists
    /// to the rows.
    package static let optionProperties: [OptionProperty] = [
        .same("minimumClipDuration", \.minimumClipDuration, JobOption.minDuration),
        .same("width", \.width, JobOption.width),
        // Terms as the command line takes them: plain, not negative.
        .converted("aspect", \.aspect, JobOption.aspect) {
            $0.width > 0 && $0.height > 0 ? Rational(reducing: $0.width, $0.height) : nil
        },
        // 29.97 is NTSC's 30000/1001, as on the command line.
        .converted("frameRate", \.frameRate, JobOption.fps) { Rational(rate: $0)?.reduced },
        .same("crf", \.crf, JobOption.crf),
        .same("loudness", \.loudness, JobOption.loudness),
        .same("maxPixels", \.maxPixels, JobOption.maxPixels),
        .same("maxSize", \.maxSize, JobOption.maxSize),
        .same("maxDuration", \.maxDuration, JobOption.maxDuration),
        .same("posterName", \.posterName, JobOption.poster),
        .same("posterTime", \.posterTime, JobOption.posterAt),
        .choice("fit", \.fit, JobOption.fit),
        .choice("quality", \.quality, JobOption.quality),
        .choice("preset", \.preset, JobOption.preset),
        .choice("toneMapping", \.toneMapping, JobOption.tonemap),
        .choice("skipDeblocking", \.skipDeblocking, JobOption.skipDeblocking),
        .flag("chapters", \.chapters, JobOption.chapters),
        .flag("stripsMetadata", \.stripsMetadata, JobOption.stripMetadata),
        .flag("skipsInvalidClips", \.skipsInvalidClips, JobOption.skipInvalid),
        .flag("isStrict", \.isStrict, JobOption.strict),
        .same("minimumFreeSpace", \.minimumFreeSpace, JobOption.minFree),
    ]

    /// Job options this API does not offer, each with why: none yet. A new row goes in
    /// ``optionProperties`` or here.
    package static let optionsLeftOut: [(option: String, reason: String)] = []

    /// What the job asks for beyond its clips and output: each property set through its
    /// option's row, then the rules between options.
    func settings() throws(JobOptionError) -> JobSettings {
        var settings = JobSettings()
        for property in MergeJob.optionProperties { try property.set(from: self, into: &settings) }
        settings.merge.overwrite = overwrites
        try settings.validate(naming: MergeJob.naming)
        return settings
    }

    /// Options named as this API names them, by their properties, in the rules between them and
    /// in the merge's messages.
    static let naming = OptionNaming(quoted: false) { option in
        optionProperties.first { $0.option.name == option }?.name ?? switchNames[option] ?? option
    }

    /// The job's switches that are no option row (what the run does, not what it makes), as
    /// their properties are named.
    private static let switchNames = ["delete-sources": "deletesSources"]
}
