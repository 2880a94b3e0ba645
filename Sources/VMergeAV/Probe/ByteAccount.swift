import CFFmpeg
import Foundation
import VMergeCore

/// --delete-sources' last question of a source it would delete: is every byte of the file in
/// the output? A byte is accounted for when it lies in a shown sample of a stream the output
/// carries whole (the picture, the sound decoded, a timecode that only numbers the frames), or
/// in the container's own structure as the demuxer and a walk of its boxes, elements or packets
/// read it (`ContainerMap`). Anything else (an attachment, a track the output does not carry, a
/// sample the track's own edit list hides, a second picture layer, a trailer after the last
/// box, an unknown box, padding that holds data) keeps the file, and the reason names the bytes.
/// A container that is not walked keeps the file too: vmerge cannot tell.
package enum ByteAccount {
    /// Sound and picture may lie this far outside each other in the output (its sound starts and
    /// ends with its picture): the codecs' framing.
    static let primingSeconds = 0.1

    /// What a track's own edit list may hide without losing anything recorded, in seconds: an
    /// encoder's priming and padding. For sound, AAC's 2,112 samples of priming and up to a
    /// frame (1,024) of padding, or 0.1 s when that is longer; for anything else 0.1 s.
    static func priming(of stream: Int, _ clip: ClipInfo) -> Double {
        guard stream == clip.audio?.streamIndex, let rate = clip.audio?.sampleRate, rate > 0 else {
            return primingSeconds
        }
        return max(primingSeconds, Double(2112 + 1024) / Double(rate))
    }

    /// The clip's file as it was probed (never through a link), or its object through the job's
    /// reader.
    private static func openInput(
        _ clip: ClipInfo, _ sources: (any InputSources)?, demuxerOptions: [(String, String)] = []
    ) throws -> InputFile {
        try InputFile.open(
            clip.path, confinement: nil, sources: sources, expected: clip.fileID, followLinks: false, cancel: nil,
            demuxerOptions: demuxerOptions)
    }

    /// Why some byte of `clip`'s file is in no output (for the ledger: "kept: bytes ... are in
    /// no output"), or nil when every byte is accounted for.
    package static func unaccounted(_ clip: ClipInfo, sources: (any InputSources)? = nil) -> String? {
        do {
            return try account(clip, sources)
        } catch {
            return "kept: its bytes cannot be accounted for: \(VMergeError.reason(of: error))"
        }
    }

    private struct Finding {
        /// The bytes, or for samples spread through the file the span from the first to the last.
        var range: Range<Int64>
        var what: String
        /// The bytes are a span ("within bytes ..., 2 s of its sound ... are in no output").
        var isSpan = false
    }

    /// A packet of pass one (what the demuxer shows) or two (every stored sample).
    private struct Sample {
        var stream: Int
        var range: Range<Int64>
        var seconds: Double
        var start: Double
    }

    /// The streams the output carries: the picture, the sound decoded, timecodes whose samples
    /// only number the frames (a few bytes each: one larger holds more than a frame number).
    private struct Carried {
        var streams: Set<Int>
        var timecodes: Set<Int>

        init(_ clip: ClipInfo, _ input: InputFile) throws {
            streams = [clip.video.streamIndex]
            if let audio = clip.audio { streams.insert(audio.streamIndex) }
            timecodes = []
            for index in 0..<input.streamCount
            where MetadataTrack.isTimecode(tag: try input.parameters(ofStream: index).codec_tag) {
                timecodes.insert(index)
            }
            streams.formUnion(timecodes)
        }

        func holds(_ sample: Sample) -> Bool {
            streams.contains(sample.stream) && !(timecodes.contains(sample.stream) && sample.range.count > 16)
        }
    }

    /// Pass one: the samples the demuxer shows, those it reads only to discard, and the rest.
    private struct Shown {
        var samples: [Range<Int64>] = []
        var discarded: [Sample] = []
        var others: [Sample] = []
        var sound: [Sample] = []
        var picture = (start: Double.infinity, end: -Double.infinity)
        var container = ContainerMap.Carried()

        init(_ input: InputFile, _ clip: ClipInfo, _ carried: Carried) throws {
            for index in carried.streams { container.pids.insert(Int64(try input.stream(index).pointee.id)) }
            try ByteAccount.read(input) { sample, discard in
                if !carried.holds(sample) {
                    others.append(sample)
                } else if discard {
                    discarded.append(sample)
                } else {
                    samples.append(sample.range)
                    container.sampleStarts.insert(sample.range.lowerBound)
                    if sample.stream == clip.video.streamIndex {
                        picture = (min(picture.start, sample.start), max(picture.end, sample.start + sample.seconds))
                    } else if sample.stream == clip.audio?.streamIndex {
                        sound.append(sample)
                    }
                }
            }
        }
    }

    private static func account(_ clip: ClipInfo, _ sources: (any InputSources)?) throws -> String? {
        let input = try openInput(clip, sources)
        let demuxer = String(cString: input.context.pointee.iformat.pointee.name)
        guard let family = ContainerMap.Family(demuxer: demuxer) else {
            return "kept: vmerge cannot account for every byte of a '\(VisibleText.of(demuxer))' file "
                + "(it reads the layout of MP4, QuickTime, Matroska and MPEG-TS files)"
        }
        let carried = try Carried(clip, input)
        let shown = try Shown(input, clip, carried)
        let bytes: FileBytes
        if let source = try sources?.source(named: clip.path) {
            // The job's reader: every fetch of it is conditional on the tag first seen.
            bytes = FileBytes(source)
        } else {
            let file = try SafeFile.openForReading(clip.path, followLinks: false)
            guard file.info.map(FileID.init) == clip.fileID else {
                return "kept: it is not the file that was merged (replaced or changed since)"
            }
            bytes = FileBytes(file)
        }
        let map = ContainerMap.walk(bytes, as: family, carried: shown.container)
        var findings: [Finding] = []
        let covered = ByteRanges(shown.samples)
        var unexplained: [Range<Int64>] = []
        for region in map.regions {
            switch region.holder {
            case .structure, .description: break
            case let .nothing(what): findings.append(Finding(range: region.range, what: what))
            case let .track(pid): findings.append(Finding(range: region.range, what: describe(pid: pid, in: input)))
            case let .block(track):
                findings.append(
                    Finding(range: region.range, what: "in a block of its track \(track) that no output carries"))
            case .samples: unexplained += covered.gaps(in: region.range)
            }
        }
        for gap in ByteRanges(map.regions.map(\.range)).gaps(in: 0..<Int64(input.fileSize)) {
            findings.append(Finding(range: gap, what: "in no part of the file its walk could read"))
        }
        var hidden = shown.discarded
        if !unexplained.isEmpty {
            findings += try explain(
                unexplained, shown, carried, sources, clip, input, hidden: &hidden,
                readsAgain: family == .isoBMFF)
        }
        findings += hiddenFindings(hidden, clip: clip, input: input)
        findings += soundPastPicture(shown.sound, picture: shown.picture, clip: clip)
        return reason(findings)
    }

    /// Media data no shown sample holds: a sample of a track the output does not carry, one the
    /// edit list hides (an MP4 is read again with its edit lists ignored, to find those it
    /// leaves out altogether; they join `hidden`), or bytes in no sample at all.
    private static func explain(
        _ unexplained: [Range<Int64>], _ shown: Shown, _ carried: Carried, _ sources: (any InputSources)?,
        _ clip: ClipInfo, _ input: InputFile, hidden: inout [Sample], readsAgain: Bool
    ) throws -> [Finding] {
        var stored: [Sample] = shown.others + shown.discarded
        if readsAgain {
            let all = try openInput(clip, sources, demuxerOptions: [("ignore_editlist", "1")])
            try read(all) { sample, _ in stored.append(sample) }
        }
        stored.sort { $0.range.lowerBound < $1.range.lowerBound }
        let gaps = ByteRanges(unexplained)
        var findings: [Finding] = []
        var explained: [Range<Int64>] = []
        var hiddenSeen = Set(shown.discarded.map(\.range.lowerBound))
        for sample in stored where gaps.overlaps(sample.range) {
            explained.append(sample.range)
            if !carried.holds(sample) {
                findings.append(Finding(range: sample.range, what: describe(stream: sample.stream, in: input)))
            } else if hiddenSeen.insert(sample.range.lowerBound).inserted {
                hidden.append(sample)
            }
        }
        let explainedRanges = ByteRanges(explained)
        for gap in unexplained {
            for rest in explainedRanges.gaps(in: gap) {
                findings.append(Finding(range: rest, what: "in its media data but in no sample of any track"))
            }
        }
        return findings
    }

    /// Reads every packet of `input`: its stream, bytes, length and start in seconds, and
    /// whether the demuxer marks it to be discarded (before the edit list's start).
    private static func read(_ input: InputFile, _ each: (Sample, Bool) -> Void) throws {
        let packet = try Packet()
        // Seconds per tick of each stream, once (a transport stream may add streams as it goes).
        var scales: [Double] = []
        while try input.read(into: packet) {
            defer { packet.unref() }
            let p = packet.pointer.pointee
            guard p.pos >= 0, p.size > 0, p.stream_index >= 0, Int(p.stream_index) < input.streamCount else { continue }
            while scales.count < input.streamCount {
                let base = try input.stream(scales.count).pointee.time_base
                scales.append(base.den != 0 ? Double(base.num) / Double(base.den) : 0)
            }
            let scale = scales[Int(p.stream_index)]
            let time = p.pts != noPTS ? p.pts : p.dts
            let sample = Sample(
                stream: Int(p.stream_index), range: p.pos..<p.pos.addingSaturating(Int64(p.size)),
                seconds: Double(max(0, p.duration)) * scale, start: time == noPTS ? 0 : Double(time) * scale)
            each(sample, p.flags & AV_PKT_FLAG_DISCARD != 0)
        }
    }

    /// Samples of a carried stream its edit list hides, past the encoder's priming: a finding
    /// per stream, spanning its hidden bytes.
    private static func hiddenFindings(_ hidden: [Sample], clip: ClipInfo, input: InputFile) -> [Finding] {
        var findings: [Finding] = []
        for stream in Set(hidden.map(\.stream)).sorted() {
            let samples = hidden.filter { $0.stream == stream }
            let seconds = samples.reduce(0) { $0 + $1.seconds }
            guard seconds > priming(of: stream, clip) else { continue }
            let what =
                stream == clip.video.streamIndex ? "picture" : stream == clip.audio?.streamIndex ? "sound" : "track"
            let first = samples.map(\.range.lowerBound).min() ?? 0, last = samples.map(\.range.upperBound).max() ?? 0
            findings.append(
                Finding(
                    range: first..<last,
                    what: "\(formatSeconds(seconds)) s of its \(what) (stream \(stream)) that its edit list hides",
                    isSpan: true))
        }
        return findings
    }

    /// Sound shown before the first picture or after the last: the output's sound starts and
    /// ends with its picture (0.1 s either way is the codecs' framing).
    private static func soundPastPicture(_ sound: [Sample], picture: (start: Double, end: Double), clip: ClipInfo)
        -> [Finding]
    {
        guard picture.start <= picture.end else { return [] }
        let outside = sound.filter {
            $0.start >= picture.end + primingSeconds || $0.start + $0.seconds <= picture.start - primingSeconds
        }
        guard let first = outside.map(\.range.lowerBound).min(), let last = outside.map(\.range.upperBound).max() else {
            return []
        }
        let seconds = outside.reduce(0) { $0 + $1.seconds }
        return [
            Finding(
                range: first..<last, what: "\(formatSeconds(seconds)) s of its sound before or after its picture",
                isSpan: true)
        ]
    }

    private static func describe(stream index: Int, in input: InputFile) -> String {
        let type = (try? input.parameters(ofStream: index).codec_type).map { av_get_media_type_string($0) }
        let kind = type.flatMap { $0 }.map { String(cString: $0) } ?? "unknown"
        return "in its stream \(index) (\(kind)) that no output carries"
    }

    private static func describe(pid: Int64, in input: InputFile) -> String {
        if let index = (0..<input.streamCount).first(where: {
            (try? input.stream($0).pointee.id).map(Int64.init) == pid
        }) {
            return describe(stream: index, in: input)
        }
        return "in packets of PID 0x\(String(pid, radix: 16, uppercase: true)) that no stream is read from"
    }

    /// The ledger's reason: the first range no output holds, and how many more.
    private static func reason(_ findings: [Finding]) -> String? {
        let sorted = findings.filter { !$0.range.isEmpty }.sorted { $0.range.lowerBound < $1.range.lowerBound }
        guard let first = sorted.first else { return nil }
        var text =
            first.isSpan
            ? "kept: within \(ByteRanges.text(first.range)), \(first.what) are in no output"
            : "kept: \(ByteRanges.text(first.range)) \(first.what) \(first.range.count == 1 ? "is" : "are") in no output"
        let rest = sorted.dropFirst()
        if !rest.isEmpty {
            let bytes = ByteRanges(rest.map(\.range)).byteCount
            text +=
                "; so are \(ByteRanges.grouped(bytes)) more bytes in \(rest.count) other place\(rest.count == 1 ? "" : "s")"
        }
        return text
    }
}
