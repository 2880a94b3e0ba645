import CFFmpeg
import Foundation
import VMergeCore

/// The recording time a file's container gives, for `--sort recorded`: read from its header
/// alone (no stream is analysed), the most precise of its clocks.
package enum RecordingClock {
    private static let appleTag = "com.apple.quicktime.creationdate"

    /// nil when the container gives none, or the file cannot be opened (probing says why later).
    package static func read(_ path: String, confinedTo confinement: InputConfinement? = nil) -> RecordingTime? {
        (try? time(of: path, confinedTo: confinement)) ?? nil
    }

    /// The same, throwing when the file cannot be opened as media: a file that is not a video
    /// has no recording time to miss (probing says what it is).
    package static func time(
        of path: String, confinedTo confinement: InputConfinement? = nil, sources: (any InputSources)? = nil
    ) throws -> RecordingTime? {
        let input = try InputFile.open(path, analyse: false, confinement: confinement, sources: sources, cancel: nil)
        let format = String(cString: input.context.pointee.iformat.pointee.name)
        // An MP4/QuickTime header counts whole seconds, whatever digits FFmpeg prints them with;
        // Matroska's DateUTC counts nanoseconds, printed to the microsecond.
        let headerPrecision: Int? = format.hasPrefix("mov") ? 0 : nil
        let streams = (0..<input.streamCount).compactMap { try? input.metadata("creation_time", stream: $0) }
        let created = (input.metadata("creation_time") ?? streams.first).flatMap {
            RecordingTime(iso: $0, tag: "creation_time", precision: headerPrecision)
        }
        // Apple's first: at the same precision, the one that carries the phone's time zone.
        let apple = input.metadata(appleTag).flatMap { RecordingTime(iso: $0, tag: appleTag) }
        return RecordingTime.best([apple, created])
    }
}
