/// Text from outside vmerge (file and folder names, job names, option words as typed, database
/// fields, FFmpeg's messages) made safe to print on one line of a log or a terminal: every C0
/// control, DEL, every C1 control and the Unicode line and paragraph separators is shown as an
/// escape (`\n`, `\t`, `\r`, `\x1B`, `\u{85}`, `\u{2028}`) instead of being sent, so no name can
/// start a line that looks like vmerge's own, move the cursor or send a terminal command.
/// The bidirectional controls (U+061C, U+200E/F, U+202A-E, U+2066-9) and the invisible
/// characters that only hide a difference (zero width space U+200B, word joiner U+2060, BOM
/// U+FEFF) are shown the same way, so no name can reorder the rest of its line (a report row, a
/// dashboard cell) or pass for another. Zero width joiners (U+200C/D) stay: scripts such as
/// Persian and emoji sequences need them.
/// A byte of a file name that is not UTF-8 (`FileName`) is shown as `\xFF`.
/// Everything else, non-ASCII letters included, is left as it is.
package enum VisibleText {
    package static func of(_ text: String) -> String {
        // Most text needs nothing: return it without copying.
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var out = ""
        out.unicodeScalars.reserveCapacity(text.unicodeScalars.count + 8)
        for scalar in text.unicodeScalars {
            guard needsEscape(scalar) else {
                out.unicodeScalars.append(scalar)
                continue
            }
            switch scalar {
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            case _ where FileName.isEscapedByte(scalar):
                out += "\\x" + String(scalar.value & 0xFF, radix: 16, uppercase: true)
            default:
                let hex = String(scalar.value, radix: 16, uppercase: true)
                out += scalar.value < 0x80 ? "\\x" + (hex.count < 2 ? "0" + hex : hex) : "\\u{" + hex + "}"
            }
        }
        return out
    }

    static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x2028, 0x2029: return true
        case 0x061C, 0x200B, 0x200E, 0x200F, 0x202A...0x202E, 0x2060, 0x2066...0x2069, 0xFEFF: return true
        default: return FileName.isEscapedByte(scalar)
        }
    }
}
