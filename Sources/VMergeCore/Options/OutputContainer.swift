import Foundation

/// The container an output name asks for: MP4 (.mp4, .m4v) or QuickTime (.mov); the same
/// streams and the index first either way.
package enum OutputContainer: String, Sendable, CaseIterable {
    case mp4, m4v, mov

    /// From the name's extension, any case; nil for any other (a .mkv name must not get an MP4).
    package init?(path: String) {
        self.init(rawValue: FileName(path).pathExtension.lowercased())
    }

    /// The libavformat muxer.
    package var muxer: String { self == .mov ? "mov" : "mp4" }

    package static let accepted = "'.mp4', '.m4v' or '.mov'"

    /// The one rule on an output video's name, in its one wording, whichever door the name came
    /// in by (the container follows the name: an MP4 is never written under another one); nil
    /// when the name is one vmerge writes.
    package static func problem(withName path: String) -> String? {
        OutputContainer(path: path) == nil
            ? "vmerge writes MP4 or QuickTime files; the name must end in \(accepted)" : nil
    }
}
