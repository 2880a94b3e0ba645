/// One more rendition of a job's one timeline (`--rendition SPEC[=FILE]`, issue 49): its picture
/// size, and so its aspect, how each clip's upright picture is fitted into it, and its encoder's
/// settings where they differ from the job's. It is written to a file of its own, published with
/// the job's set.
///
/// SPEC is a preset's name (`Rendition.Preset`) or `WIDTHxHEIGHT`, then any of `:crf=N`,
/// `:fit=crop|pad|blur`, `:preset=NAME`; `=FILE` names its file, else it goes beside the job's
/// output as `<stem>-<name>.mp4`: `9x16-1080:crf=20=reel.mp4`. Values hold no `:` or `=`; a
/// file name may hold anything.
package struct Rendition: Sendable, Equatable, Hashable {
    /// The shapes people post, by the names `--rendition` takes.
    package enum Preset: String, Sendable, CaseIterable {
        /// 320x240: the mission's picture, and the job's own rendition unless it says otherwise.
        case fourThree240 = "4x3-240"
        case fourThree480 = "4x3-480"
        case sixteenNine720 = "16x9-720"
        /// 1080x1920: Shorts, Reels, TikTok.
        case nineSixteen1080 = "9x16-1080"
        case square720 = "1x1-720"

        package var size: (width: Int, height: Int) {
            switch self {
            case .fourThree240: (320, 240)
            case .fourThree480: (640, 480)
            case .sixteenNine720: (1280, 720)
            case .nineSixteen1080: (1080, 1920)
            case .square720: (720, 720)
            }
        }
    }

    /// The preset's name, or `WIDTHxHEIGHT`: what its default file name ends with.
    package var name: String
    package var width: Int
    package var height: Int
    /// nil: the job's.
    package var fit: Fit?
    package var crf: Double?
    package var preset: X264Preset?
    /// nil: beside the job's output, `<stem>-<name>.mp4`.
    package var file: String?

    package init(
        name: String, width: Int, height: Int, fit: Fit? = nil, crf: Double? = nil, preset: X264Preset? = nil,
        file: String? = nil
    ) {
        self.name = name
        self.width = width
        self.height = height
        self.fit = fit
        self.crf = crf
        self.preset = preset
        self.file = file
    }

    /// The rendition `text` asks for, or why it is not one (a sentence for the usage error).
    package static func parse(_ text: String) -> Result<Rendition, RenditionProblem> {
        let (spec, file) = split(text)
        var parts = spec.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        let shape = parts.removeFirst()
        guard var rendition = sized(shape) else {
            return .failure(
                RenditionProblem(
                    "'\(shape)' is neither a preset (\(Preset.allCases.map(\.rawValue).joined(separator: ", "))) "
                        + "nor WIDTHxHEIGHT"))
        }
        var given: Set<String> = []
        for part in parts {
            if let problem = rendition.apply(part, given: &given) { return .failure(problem) }
        }
        if let file {
            guard !file.isEmpty else { return .failure(RenditionProblem("'=' is followed by no file name")) }
            // Published with the job's set, through the output folder's one descriptor.
            guard !file.contains("/"), file != ".", file != ".." else {
                return .failure(RenditionProblem("its file is a name in the output's folder, without a '/'"))
            }
            if let problem = OutputContainer.problem(withName: file) {
                return .failure(RenditionProblem("its file's name: " + problem))
            }
            rendition.file = file
        }
        if let problem = rendition.sizeProblem(shape: shape) { return .failure(problem) }
        return .success(rendition)
    }

    /// Takes one `key=value` setting; why not, if it cannot (`given`: the keys seen so far).
    private mutating func apply(_ part: String, given: inout Set<String>) -> RenditionProblem? {
        let pair = part.split(separator: "=", maxSplits: 1).map(String.init)
        guard pair.count == 2 else { return RenditionProblem("'\(part)' is not key=value") }
        guard given.insert(pair[0]).inserted else { return RenditionProblem("\(pair[0]) is given twice") }
        switch pair[0] {
        case "crf":
            // As --crf reads it: a plain decimal, not "0x10" or "1e1".
            guard JobOption.isPlainNumber(pair[1]), !pair[1].contains("e"), !pair[1].contains("E"),
                let crf = Double(pair[1]), crf.isFinite, (0...51).contains(crf)
            else { return RenditionProblem("crf is a number from 0 to 51") }
            self.crf = crf
        case "fit":
            guard let fit = Fit(rawValue: pair[1]) else { return RenditionProblem("fit is crop, pad or blur") }
            self.fit = fit
        case "preset":
            guard let preset = X264Preset(rawValue: pair[1]) else {
                return RenditionProblem(
                    "preset is one of \(X264Preset.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            self.preset = preset
        default:
            return RenditionProblem("'\(pair[0])' is not a rendition's setting (crf, fit, preset)")
        }
        return nil
    }

    /// Why its size cannot be made, or nil (`shape`: as written, for the preset meant).
    private func sizeProblem(shape: String) -> RenditionProblem? {
        let least = Limits.minOutputSide(fit: fit ?? .crop)
        // "9x16" is a size of 9 by 16 pixels; the preset meant is named.
        let meant = Preset.allCases.first { $0.rawValue.hasPrefix(shape + "-") }.map {
            "; the preset is \($0.rawValue)"
        }
        guard (least...Limits.maxOutputSide).contains(width), (least...Limits.maxOutputSide).contains(height) else {
            return RenditionProblem("each side is \(least) to \(Limits.maxOutputSide) pixels" + (meant ?? ""))
        }
        guard width % 2 == 0, height % 2 == 0 else {
            return RenditionProblem("each side is even (4:2:0 pictures)" + (meant ?? ""))
        }
        // FFmpeg refuses pictures of 2^28 pixels and more; the inputs' own default bound, here too.
        guard width * height <= Limits.defaultMaxPixels else {
            return RenditionProblem("a picture is at most 8192x8192's pixels")
        }
        return nil
    }

    /// The spec and the file: the file follows the first `=` that ends the shape or a setting
    /// (`crf=20=x.mp4`: the setting's `=` comes first).
    private static func split(_ text: String) -> (spec: String, file: String?) {
        var index = text.startIndex
        var inSetting = false
        while index < text.endIndex {
            switch text[index] {
            case ":": inSetting = true
            case "=" where inSetting: inSetting = false
            case "=": return (String(text[..<index]), String(text[text.index(after: index)...]))
            default: break
            }
            index = text.index(after: index)
        }
        return (text, nil)
    }

    /// A preset, or `WIDTHxHEIGHT` in plain digits.
    private static func sized(_ shape: String) -> Rendition? {
        if let preset = Preset(rawValue: shape) {
            return Rendition(name: shape, width: preset.size.width, height: preset.size.height)
        }
        let sides = shape.split(separator: "x", omittingEmptySubsequences: false)
        guard sides.count == 2,
            sides.allSatisfy({ !$0.isEmpty && $0.count <= 5 && $0.allSatisfy { $0.isASCII && $0.isNumber } }),
            let width = Int(sides[0]), let height = Int(sides[1])
        else { return nil }
        return Rendition(name: shape, width: width, height: height)
    }

    /// The text `parse` reads back into it: how a job file, a queue spec and the API write it.
    package var spec: String { name + settingsText + (file.map { "=" + $0 } ?? "") }

    /// What the job key records of it: every setting that shapes its file, and its name.
    package var keyText: String { "\(width)x\(height)" + settingsText + "=" + (file ?? "-" + name) }

    /// Its settings as `parse` reads them, ":crf=20:fit=blur".
    private var settingsText: String {
        (crf.map { ":crf=\(formatDecimal($0))" } ?? "") + (fit.map { ":fit=\($0.rawValue)" } ?? "")
            + (preset.map { ":preset=\($0.rawValue)" } ?? "")
    }

    /// The aspect its picture has.
    package var aspect: Rational { Rational(width, height).reduced }

    /// The centred region of a clip's coded picture that this rendition shows with `--fit crop`:
    /// its own aspect, from the upright picture (a 9:16 rendition of a landscape clip is the
    /// centre of the whole picture, not of the 4:3 one's crop; a portrait clip fills it whole).
    package func crop(
        codedWidth: Int, codedHeight: Int, sampleAspect: Rational, orientation: Orientation
    ) -> CropRect {
        centreCrop(
            codedWidth: codedWidth, codedHeight: codedHeight, sampleAspect: sampleAspect, orientation: orientation,
            aspect: aspect)
    }

    /// Its file, in the folder of the job's `output`: the name it gives, or `trip.mp4` with
    /// `9x16-1080` is `trip-9x16-1080.mp4`.
    package func fileName(besideOutput output: FileName) -> FileName {
        let own = FileName(file ?? output.deletingExtension.lastComponent.escaped + "-" + name + ".mp4")
        // An object's key as written, as its poster's (`MergeOptions.posterPath`): "s3://b/a//t.mp4"
        // is not "s3://b/a/t.mp4", so its renditions go under "a//" too, never into another prefix.
        if RemoteName.looksRemote(output.escaped) {
            return FileName(SafeFile.split(output.escaped).folder + "/" + own.escaped)
        }
        return output.folder.appending(own)
    }
}

/// Why a `--rendition` value is not one.
package struct RenditionProblem: Error, Equatable, CustomStringConvertible {
    package let description: String
    init(_ description: String) { self.description = description }
}
