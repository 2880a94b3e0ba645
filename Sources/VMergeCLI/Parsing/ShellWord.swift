import VMergeCore

/// A suggested command line as the user can paste it back into bash, zsh or ksh: each word
/// quoted only when it needs it (single quotes, which every POSIX shell reads; `$'...'` for
/// control characters and bytes that are not UTF-8, which dash does not), so `vmerge part1.mov 'my clip.mov' -o merged.mp4` reads as typed.
enum ShellWord {
    /// `word` as one shell word: bare when it holds only characters no shell treats specially,
    /// single-quoted when it holds others that are printable, and `$'...'` (bash, zsh, ksh)
    /// when it holds a control character or a byte that is not UTF-8, written as `\xHH`.
    static func quoted(_ word: String) -> String {
        let bare = !word.isEmpty && !word.hasPrefix("~") && word.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII && (scalar.properties.isAlphabetic || scalar.properties.numericType != nil
                || "_./:=,+@%-".unicodeScalars.contains(scalar))
        }
        if bare { return word }
        let awkward = word.unicodeScalars.contains { scalar in
            FileName.isEscapedByte(scalar) || scalar.value < 0x20 || scalar.value == 0x7F
                || (0x80..<0xA0).contains(scalar.value)
        }
        guard awkward else { return "'" + word.replacingOccurrences(of: "'", with: #"'\''"#) + "'" }
        var text = "$'"
        for scalar in word.unicodeScalars {
            if let byte = FileName.byte(of: scalar) ?? (scalar.value < 0x20 || scalar.value == 0x7F ? UInt8(scalar.value) : nil) {
                text += "\\x" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            } else if (0x80..<0xA0).contains(scalar.value) {
                // A C1 control is two bytes in UTF-8.
                text += String(scalar).utf8.map { "\\x" + String($0, radix: 16, uppercase: true) }.joined()
            } else {
                text += scalar == "'" || scalar == "\\" ? "\\" + String(scalar) : String(scalar)
            }
        }
        return text + "'"
    }

    /// `words` as one command line.
    static func command(_ words: [String]) -> String { words.map(quoted).joined(separator: " ") }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
