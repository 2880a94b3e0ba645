import Foundation
internal import VMergeCore

extension MergeReport {
    /// What became of one input file, and what it is once read: the inspection of a clip.
    public struct Clip: Sendable, Hashable, Codable {
        /// What became of the clip.
        public enum Status: String, Sendable, Hashable, Codable {
            /// In the output (the whole clip, or the part asked for).
            case kept
            /// Shorter than ``MergeJob/minimumClipDuration``, or without a frame.
            case droppedShort = "dropped-short"
            /// Not a usable video (see ``reason``).
            case invalid
            /// Past ``MergeJob/maxDuration`` or ``MergeJob/maxSize``.
            case beyondLimit = "beyond-limit"
            /// Read, but the merge stopped before writing it.
            case probed
            /// The merge stopped before reading it.
            case notProbed = "not-probed"
        }

        /// The clip's video stream as read.
        public struct Video: Sendable, Hashable, Codable {
            /// FFmpeg's name for the codec: "h264", "hevc", "prores"...
            public var codec: String
            /// The picture's width as stored, before its rotation.
            public var width: Int
            /// The picture's height as stored, before its rotation.
            public var height: Int
            /// Frames per second (the average).
            public var frameRate: Double
            /// FFmpeg's name for the pixel format: "yuv420p", "yuv420p10le"...
            public var pixelFormat: String
            /// Clockwise degrees the picture is turned to stand upright (0, 90, 180, 270), from
            /// the clip's display matrix.
            public var rotation: Int
            /// Whether it is mirrored (a front camera's), after the rotation.
            public var isMirrored: Bool
            /// Whether it is HDR (HLG or PQ): brought to SDR by ``MergeJob/toneMapping``.
            public var isHDR: Bool
        }

        /// The clip's sound as read.
        public struct Audio: Sendable, Hashable, Codable {
            /// FFmpeg's name for the codec: "aac", "pcm_s16le"...
            public var codec: String
            /// Samples a second.
            public var sampleRate: Int
            /// 1 for mono, 2 for stereo...
            public var channels: Int
        }

        /// The region of the picture as stored (before its rotation) that fills the output; all
        /// of it with ``MergeJob/Fit-swift.enum/pad`` or ``MergeJob/Fit-swift.enum/blur``.
        public struct Crop: Sendable, Hashable, Codable {
            /// The left edge, in pixels of the stored picture.
            public var x: Int
            /// The top edge.
            public var y: Int
            /// The region's width.
            public var width: Int
            /// The region's height.
            public var height: Int
        }

        /// The file (or the folder's file) as the job named it.
        public var file: FileLocation
        /// What became of it.
        public var status: Status
        /// Why it is not in the output, when it is not.
        public var reason: String?
        /// The clip's own length, in seconds, once read.
        public var duration: Double?
        /// Where it starts on the output, in seconds (kept clips).
        public var outputStart: Double?
        /// How long of it the output holds, in seconds (kept clips).
        public var outputDuration: Double?
        /// Its video, once read; nil when it was not read (or could not be).
        public var video: Video?
        /// Its sound; nil when it has none (the output has silence there) or was not read.
        public var audio: Audio?
        /// What of its picture the output shows (kept clips, and those a dry run would keep).
        public var crop: Crop?
        /// Each of ``MergeJob/renditions``' own window of the coded picture, in their order; `nil`
        /// when the clip is not in the output or the job has none.
        public var renditionCrops: [Crop]?

        init(_ entry: RunReport.InputEntry) {
            file = FileLocation(escaped: entry.path)
            status = Status(entry.outcome)
            reason = entry.outcome.reason(naming: MergeJob.naming)
            duration = entry.clip?.durationSeconds
            if case let .kept(_, slot) = entry.outcome {
                outputStart = Double(slot.startMicros) / 1e6
                outputDuration = Double(slot.heldMicros) / 1e6
            }
            video = entry.clip.map { clip in
                let v = clip.video
                return Video(
                    codec: v.codec, width: v.width, height: v.height, frameRate: v.frameRate.doubleValue,
                    pixelFormat: v.pixelFormat, rotation: v.orientation.rotationDegrees,
                    isMirrored: v.orientation.isMirrored, isHDR: v.colour.dynamicRange != .sdr)
            }
            audio = entry.clip?.audio.map { Audio(codec: $0.codec, sampleRate: $0.sampleRate, channels: $0.channels) }
            renditionCrops = entry.outcome.planned.flatMap { planned in
                planned.renditions.isEmpty
                    ? nil
                    : planned.renditions.map {
                        Crop(x: $0.crop.x, y: $0.crop.y, width: $0.crop.width, height: $0.crop.height)
                    }
            }
            crop = entry.outcome.planned.map {
                Crop(x: $0.crop.x, y: $0.crop.y, width: $0.crop.width, height: $0.crop.height)
            }
        }

        // The keys the earlier version wrote (the file was `path`), so its JSON still reads.
        private enum CodingKeys: String, CodingKey {
            case file = "path", status, reason, duration, outputStart, outputDuration, video, audio, crop,
                renditionCrops
        }
    }

    /// The file written (or, for a dry run, planned).
    public struct Output: Sendable, Hashable, Codable {
        /// Why an output ends before its clips do.
        public enum Truncation: String, Sendable, Hashable, Codable {
            /// ``MergeJob/maxDuration``.
            case maxDuration = "max-duration"
            /// ``MergeJob/maxSize``.
            case maxSize = "max-size"
        }

        /// A file found under the output's name by a dry run.
        public enum Existing: String, Sendable, Hashable, Codable {
            /// This very job's output, made earlier by this user (it records the job's key):
            /// ``MergeSession/run()`` returns at once with status ``MergeReport/Status-swift.enum/skipped``.
            case thisJob = "this-job"
            /// Another file of this user's: replaced only with ``MergeJob/overwrites``.
            case anotherFile = "another-file"
            /// Another user's file: replaced only with ``MergeJob/overwrites``.
            case anotherUsersFile = "another-users-file"
        }

        /// The file.
        public var file: FileLocation
        /// Whether it was written (false for a dry run).
        public var isWritten: Bool
        /// Its size; nil when it was not written.
        public var bytes: Int64?
        /// A generous guess at its size, made before writing (the free-space check's): a bit rate
        /// busy phone footage reaches at the output's size and quality, capped by
        /// ``MergeJob/maxSize``.
        public var estimatedBytes: Int64
        /// What is under the output's name before the run, when something is (a dry run, and
        /// ``MergeSession/inspect()``); nil when nothing is, or the run was not a dry run.
        public var existing: Existing?
        /// Its length, in seconds (planned, for a dry run).
        public var duration: Double
        /// Frames written; nil when it was not written.
        public var videoFrames: Int64?
        /// Sound samples written (per channel); nil when it was not written.
        public var audioSamples: Int64?
        /// The picture's width.
        public var width: Int
        /// The picture's height.
        public var height: Int
        /// Frames a second.
        public var frameRate: Double
        /// The index (moov) is before the media data: playback starts before the download ends.
        public var isFastStart: Bool?
        /// Why it ends before the clips do; nil when it does not.
        public var truncatedBy: Truncation?
        /// The poster written beside it (``MergeJob/posterName``).
        public var poster: FileLocation?

        /// - Parameter picture: 0 the job's own file, then each rendition's.
        init?(_ report: RunReport, picture: Int = 0) {
            let planned = report.status == .dryRun ? report.plan : nil
            guard report.output != nil || planned != nil, picture < report.options.pictures.count else { return nil }
            let written =
                picture == 0
                ? report.output
                : report.output?.renditions.first { $0.rendition == report.options.renditions[picture - 1] }
            guard written != nil || planned != nil else { return nil }
            let shape = report.options.pictures[picture]
            let name =
                picture == 0
                ? report.outputPath : report.options.renditions[picture - 1].fileName(besideOutput: report.outputPath)
            file = FileLocation(escaped: written?.path ?? name.escaped)
            isWritten = written != nil
            existing = picture == 0 ? report.preflight?.existing.flatMap { Existing(rawValue: $0.rawValue) } : nil
            bytes = written?.bytes
            let micros = written?.durationMicros ?? planned?.outputDurationMicros ?? 0
            duration = Double(micros) / 1e6
            estimatedBytes = FreeSpace.estimatedOutputBytes(
                durationMicros: report.plan?.outputDurationMicros ?? micros, options: shape)
            videoFrames = written?.videoFrames
            audioSamples = written?.audioSamples
            (width, height) = shape.outputSize
            frameRate = (report.options.frameRate.doubleValue * 1000).rounded() / 1000
            isFastStart = written?.faststart
            let truncation = written?.truncation ?? (planned?.isCutByMaxDuration == true ? .maxDuration : nil)
            truncatedBy = truncation.map { $0 == .maxSize ? .maxSize : .maxDuration }
            poster = written?.poster.map(FileLocation.init(escaped:))
        }

        // The keys the earlier version wrote (the file was `url`), so its JSON still reads.
        private enum CodingKeys: String, CodingKey {
            case file = "url", isWritten, bytes, estimatedBytes, existing, duration, videoFrames, audioSamples, width,
                height, frameRate, isFastStart, truncatedBy, poster
        }
    }
}

extension MergeReport.Clip.Status {
    init(_ outcome: InputOutcome) {
        switch outcome {
        case .kept: self = .kept
        case .leftOutBySize: self = .beyondLimit
        case .probed: self = .probed
        case .notProbed: self = .notProbed
        case .dropped(.tooShort), .dropped(.noFrame): self = .droppedShort
        case .dropped(.invalid): self = .invalid
        case .dropped(.beyondLimit): self = .beyondLimit
        }
    }
}
