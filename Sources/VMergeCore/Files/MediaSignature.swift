import Foundation

/// Whether a file begins as a video container does, from its first bytes alone. For a hint only
/// (the last operand of a command without -o that a failed run left empty, or a note named
/// out.mp4), never to accept or refuse an input: probing does that.
package enum MediaSignature {
    /// The MP4/QuickTime boxes a file may begin with.
    private static let leadingBoxes: Set<String> = [
        "ftyp", "styp", "moov", "mdat", "free", "skip", "wide", "pnot", "uuid",
    ]

    /// nil when the file is not a regular file that can be read.
    package static func looksLikeVideo(_ path: String) -> Bool? {
        guard let file = try? SafeFile.openForReading(path) else { return nil }
        let head = FileBytes(file).read(0, 8)
        if head.count == 8, let type = String(bytes: head[4..<8], encoding: .ascii), leadingBoxes.contains(type) {
            return true
        }
        // Matroska/WebM (EBML) and an MPEG transport stream's sync byte: videos named .mov by mistake.
        return head.starts(with: [0x1A, 0x45, 0xDF, 0xA3]) || head.first == 0x47
    }
}
