import Foundation
internal import VMergeCore

extension MergeJob {
    /// Checks every value by the rules the merge applies, without reading a clip: what
    /// ``MergeSession/run()`` would refuse before any work, for a form to say at once.
    ///
    /// - Throws: only ``MergeError`` (code ``MergeError/Code-swift.struct/invalidJob``), naming
    ///   the property: `catch` gets a `MergeError` without a cast.
    public func validate() throws(MergeError) {
        _ = try runnable()
    }

    /// The job as the runner takes it. Each value is checked by the rule its command-line option
    /// is read against (`ValueRule`, `TimeRange`), so the API accepts exactly what `vmerge`
    /// accepts, and set as the value it is: nothing goes through text. A refusal names the
    /// property, not the option.
    func runnable() throws(MergeError) -> Job {
        var settings = JobSettings()
        settings.merge = try mergeOptions()
        settings.minFree = try checked(minimumFreeSpace, "minimumFreeSpace", .minFree)
        do throws(JobOptionError) {
            try settings.validate(naming: MergeJob.naming)
            try JobFile.checkInputCount(clips.count)
        } catch {
            throw MergeError(code: .invalidJob, file: nil, message: error.description)
        }
        let inputs = try clips.map { clip throws(MergeError) in try clip.runnable() }
        // The container follows the name, as on the command line: never an MP4 under another name.
        guard output.isFileURL else { throw refusedFile("\(output)", "not a file URL") }
        if let problem = OutputContainer.problem(withName: outputPath) {
            throw refusedFile(VisibleText.of(outputPath), problem)
        }
        guard outputFileSystemPath.last != UInt8(ascii: "/") else {
            throw refusedFile(VisibleText.of(outputPath), "names a folder, not a file")
        }
        if let problem = FileName.lengthProblem(of: outputPath, field: "the output") {
            throw refusedFile(VisibleText.of(outputPath), problem)
        }
        if let reportURL, !reportURL.isFileURL { throw refusedFile("\(reportURL)", "not a file URL") }
        guard !inputs.isEmpty else { throw MergeError(code: .invalidJob, file: nil, message: "the job names no clips") }
        var job = Job(name: outputPath, inputs: inputs, output: outputPath, settings: settings)
        job.dryRun = isDryRun
        job.deleteSources = deletesSources
        return job
    }

    /// The merge options, each property checked and set as its option's row would set it.
    private func mergeOptions() throws(MergeError) -> MergeOptions {
        var options = MergeOptions()
        options.minDuration = try time(minimumClipDuration, "minimumClipDuration", .anyLength) ?? options.minDuration
        options.width = try checked(width, "width", .width) ?? options.width
        if let aspect {
            // Terms as the command line takes them: plain, not negative.
            guard aspect.width > 0, aspect.height > 0, let ratio = Rational(reducing: aspect.width, aspect.height),
                ValueRule.aspect.accepts(ratio)
            else { throw refused("\(aspect)", "aspect", ValueRule<Rational>.aspect.expected) }
            options.aspect = ratio
        }
        if let frameRate {
            guard let rate = Rational(rate: frameRate)?.reduced, ValueRule.frameRate.accepts(rate) else {
                throw refused(formatDecimal(frameRate), "frameRate", ValueRule<Rational>.frameRate.expected)
            }
            options.frameRate = rate
        }
        options.crf = try checked(crf, "crf", .crf)
        options.loudness = try checked(loudness, "loudness", .loudness)
        options.maxPixels = try checked(maxPixels, "maxPixels", .maxPixels) ?? options.maxPixels
        options.maxSize = try checked(maxSize, "maxSize", .maxSize)
        options.maxDuration = try time(maxDuration, "maxDuration", .someLength)
        options.poster = try checked(posterName, "posterName", .posterName)
        options.posterAt = try time(posterTime, "posterTime", .anyLength)
        // The same words on both sides (a test holds every case to its core twin).
        options.fit = fit.flatMap { VMergeCore.Fit(rawValue: $0.rawValue) } ?? options.fit
        options.quality = quality.flatMap { VMergeCore.Quality(rawValue: $0.rawValue) } ?? options.quality
        options.preset = preset.flatMap { X264Preset(rawValue: $0.rawValue) }
        options.tonemap = toneMapping.flatMap { Tonemap(rawValue: $0.rawValue) } ?? options.tonemap
        options.skipDeblocking =
            skipDeblocking.flatMap { VMergeCore.SkipDeblocking(rawValue: $0.rawValue) }
            ?? options.skipDeblocking
        options.chapters = chapters
        options.stripMetadata = stripsMetadata
        options.skipInvalid = skipsInvalidClips
        options.strict = isStrict
        options.overwrite = overwrites
        return options
    }

    private func checked<T>(_ value: T?, _ property: String, _ rule: ValueRule<T>) throws(MergeError) -> T? {
        guard let value else { return nil }
        guard rule.accepts(value) else {
            throw refused((value as? Double).map(formatDecimal) ?? "\(value)", property, rule.expected)
        }
        return value
    }

    private func time(_ value: Double?, _ property: String, _ range: TimeRange) throws(MergeError) -> Double? {
        guard let value else { return nil }
        guard !value.isNaN, range.contains(value) else {
            throw refused(formatDecimal(value), property, range.description)
        }
        return value
    }

    private func refusedFile(_ file: String, _ message: String) -> MergeError {
        MergeError(code: .invalidJob, file: file, message: message)
    }

    private func refused(_ value: String, _ property: String, _ expected: String) -> MergeError {
        MergeError(
            code: .invalidJob, file: nil, message: "invalid value \(value) for \(property): expected \(expected)")
    }

    /// Options named as this API names them, in the rules between them and in the merge's
    /// messages.
    static let naming = OptionNaming(quoted: false) { option in
        let properties = [
            "min-duration": "minimumClipDuration", "fps": "frameRate", "max-duration": "maxDuration",
            "max-size": "maxSize", "poster-at": "posterTime", "poster": "posterName", "strict": "isStrict",
            "delete-sources": "deletesSources", "skip-invalid": "skipsInvalidClips", "min-free": "minimumFreeSpace",
        ]
        return properties[option] ?? option
    }
}

extension MergeJob.Clip {
    /// The clip as the runner takes it; a refusal names the clip in ``MergeError/file``.
    func runnable() throws(MergeError) -> JobInput {
        let path = FileName.decode(fileSystemPath)
        guard url.isFileURL else { throw MergeError(code: .invalidJob, file: "\(url)", message: "not a file URL") }
        var edit = InputEdit(title: title)
        do throws(JobOptionError) {
            if let start { edit.startMicros = try InputEdit.micros(seconds: start, field: "start") }
            if let end { edit.endMicros = try InputEdit.micros(seconds: end, field: "end") }
            try edit.validate()
        } catch {
            throw MergeError(code: .invalidJob, file: VisibleText.of(path), message: error.description)
        }
        // The limit every door has, in the name's bytes (see FileName.maxPathBytes).
        if let problem = FileName.lengthProblem(of: path, field: "an input") {
            throw MergeError(code: .invalidJob, file: VisibleText.of(path), message: problem)
        }
        return JobInput(path, edit: edit)
    }
}
