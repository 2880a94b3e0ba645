/// A data track of an input (FFmpeg's data or unknown streams) as --delete-sources sees it. The
/// output carries none of them, so every one but a timecode is something of the file the output
/// does not hold, and the file is kept, saying which:
/// - `gpmd`: a GoPro's telemetry (GPS, accelerometer, gyroscope), the only record of where and
///   how the clip was shot;
/// - `mebx` (Apple's timed metadata, iPhone clips): camera data such as Cinematic mode's focus
///   and depth decisions, detected faces and stabilisation, which Photos needs to edit the clip
///   again and which no output of vmerge can give back: footage left out, as gpmd is;
/// - a QuickTime chapter track (`text` on a file with chapters): its titles are in no output;
/// - any other, unknown to us: kept rather than guessed at.
/// A timecode (`tmcd`) is not: it only numbers the frames from a start time, and the output has
/// frames and a creation time of its own. Cover art (attached pictures) and attachments are not
/// tracks and are not read here.
package enum MetadataTrack {
    /// What the output leaves out of the track at stream `index`, or nil for a timecode.
    /// `tag`: its codec tag (FFmpeg's little-endian fourcc, 0 when none); `codec`: FFmpeg's codec
    /// name, shown when there is no tag; `inChapterList`: the file has chapters, so a `text`
    /// track is the one they were read from; `isData`: FFmpeg knows it as data (else: unknown).
    package static func leftOut(tag: UInt32, codec: String, index: Int, inChapterList: Bool, isData: Bool) -> String? {
        let name = fourCC(tag) ?? VisibleText.of(codec)
        switch name {
        case "tmcd": return nil
        case "gpmd": return "its GoPro telemetry track (gpmd, stream \(index))"
        case "text" where inChapterList: return "its chapter track (text, stream \(index))"
        default:
            return isData
                ? "its timed metadata track (\(name), stream \(index))"
                : "its track of an unknown kind (\(name), stream \(index))"
        }
    }

    /// Whether a codec tag is a timecode's (`tmcd`): --delete-sources counts its samples as
    /// carried, since they only number the frames.
    package static func isTimecode(tag: UInt32) -> Bool { fourCC(tag) == "tmcd" }

    /// The tag's four characters, first byte lowest; a byte that is not printable ASCII as \xNN.
    static func fourCC(_ tag: UInt32) -> String? {
        guard tag != 0 else { return nil }
        return (0..<4).map { shift -> String in
            let byte = UInt8(truncatingIfNeeded: tag >> (8 * UInt32(shift)))
            guard (0x20...0x7E).contains(byte) else {
                let hex = String(byte, radix: 16, uppercase: true)
                return "\\x" + (hex.count < 2 ? "0" + hex : hex)
            }
            return String(UnicodeScalar(byte))
        }.joined()
    }
}
