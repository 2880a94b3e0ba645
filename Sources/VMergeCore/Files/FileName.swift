import Foundation

/// A name from the file system is bytes, not text: Linux allows any byte but "/" and NUL, and old
/// cameras, Samba shares and zip archives write names that are not UTF-8. A Swift `String` cannot
/// hold such bytes (decoding turns them into U+FFFD, so `bad\xFF.mov` and `bad\u{FFFD}.mov` would
/// be one name), so vmerge carries a name as a String in a lossless form and turns it back into
/// its exact bytes at the one door to the file system (`POSIX`):
///
/// - every byte that is part of valid UTF-8 is that character, as usual;
/// - every other byte b (always 0x80-0xFF) is the private-use character U+10FF00 + b
///   (U+10FF80-U+10FFFF), an *escaped byte*;
/// - a name that really holds one of those characters has its bytes escaped too, so no two byte
///   strings share a form and every form turns back into the bytes it came from.
///
/// The form is valid Unicode, so it passes through JSON (reports, job files, the queue's jsonb)
/// and PostgreSQL unchanged; JSON writes an escaped byte as `\udbff\udfXX` (U+10FFXX), and a job
/// file may also give one as Python's `os.fsdecode` does (`\udcXX`). Printed, an escaped byte is
/// `\xXX` (`VisibleText`).
///
/// A value of the type holds a name's bytes themselves, with the operations a path needs (as
/// swift-system's `FilePath`): its last component, stem, extension and folder, and a name joined
/// to it, all on bytes, so a name that is not UTF-8 keeps every byte through them (NSString's
/// path operations work on text and may repair or normalise it). Printed only through
/// `VisibleText`.
package struct FileName: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The name's bytes, as the file system has them.
    package let bytes: [UInt8]

    package init(bytes: [UInt8]) { self.bytes = bytes }

    /// The name a String in the lossless form stands for.
    package init(_ escaped: String) { bytes = FileName.bytes(of: escaped) }

    /// A name written in the source ("/", "."): as swift-system's `FilePath` is.
    package init(stringLiteral name: String) { self.init(name) }

    /// The lossless form, to carry in a String (JSON, the queue's rows, the current job model).
    package var escaped: String { FileName.decode(bytes) }

    /// As a person may read it: controls and bytes that are not UTF-8 shown as escapes.
    package var description: String { VisibleText.of(escaped) }

    private static let slash = UInt8(ascii: "/"), dot = UInt8(ascii: ".")

    /// Without the slashes that end it ("a/b/" is "a/b"; "/" stays "/").
    private var trimmed: ArraySlice<UInt8> {
        var end = bytes.endIndex
        while end > 1, bytes[end - 1] == FileName.slash { end -= 1 }
        return bytes[..<end]
    }

    /// Whether it starts at the root ("/clips/a.mov"), not in the current folder.
    package var isAbsolute: Bool { bytes.first == FileName.slash }

    /// The last component: "clips/a.mov" -> "a.mov", "clips/" -> "clips", "/" -> "/".
    package var lastComponent: FileName {
        let name = trimmed
        guard name.count > 1, let cut = name.lastIndex(of: FileName.slash) else { return FileName(bytes: Array(name)) }
        return FileName(bytes: Array(name[(cut + 1)...]))
    }

    /// The folder it lies in, as written: "clips/a.mov" -> "clips", "/a.mov" -> "/", "a.mov" -> ""
    /// (the current folder, unnamed).
    package var folder: FileName {
        let name = trimmed
        guard let cut = name.lastIndex(of: FileName.slash) else { return FileName(bytes: []) }
        var end = cut
        while end > name.startIndex, name[end - 1] == FileName.slash { end -= 1 }
        return FileName(bytes: end == name.startIndex ? [FileName.slash] : Array(name[..<end]))
    }

    /// Where the last component's extension begins (its last dot), if it has one, as NSString
    /// has it: not a dot that starts the name (".profile"), nor in "." and ".."; "a." has an
    /// empty one.
    private var extensionStart: Int? {
        let name = trimmed
        let start = name.lastIndex(of: FileName.slash).map { $0 + 1 } ?? name.startIndex
        let component = name[start...]
        guard let dot = component.lastIndex(of: FileName.dot), dot > start, !component.elementsEqual([46, 46]) else {
            return nil
        }
        return dot
    }

    /// The last component's extension, without its dot: "a.MOV" -> "MOV"; "" when there is none.
    package var pathExtension: String { extensionStart.map { FileName.decode(trimmed[($0 + 1)...]) } ?? "" }

    /// The path without the last component's extension: "clips/a.mov" -> "clips/a".
    package var deletingExtension: FileName {
        FileName(bytes: Array(extensionStart.map { trimmed[..<$0] } ?? trimmed))
    }

    /// The last component without its extension: "clips/a.mov" -> "a".
    package var stem: FileName { lastComponent.deletingExtension }

    /// `name` in this folder, as a person writes it: "merged/" and "merged" both give
    /// "merged/trip.mp4"; the unnamed current folder gives the name alone.
    package func appending(_ name: FileName) -> FileName {
        if bytes.isEmpty { return name }
        let folder = trimmed
        return FileName(bytes: folder == [FileName.slash] ? folder + name.bytes : folder + [FileName.slash] + name.bytes)
    }

    /// U+10FF00 + b is the byte b.
    static let escapeBase: UInt32 = 0x10FF00

    /// Whether `scalar` stands for one byte that is not UTF-8.
    package static func isEscapedByte(_ scalar: Unicode.Scalar) -> Bool { scalar.value >= escapeBase + 0x80 }

    /// The byte an escaped byte stands for.
    package static func byte(of scalar: Unicode.Scalar) -> UInt8? {
        isEscapedByte(scalar) ? UInt8(scalar.value - escapeBase) : nil
    }

    /// The escaped form of the byte `byte` (0x80-0xFF).
    package static func escaped(_ byte: UInt8) -> Unicode.Scalar {
        Unicode.Scalar(escapeBase + UInt32(byte))!
    }

    /// A name's bytes as vmerge carries them: lossless, and the plain String for valid UTF-8.
    package static func decode<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> String {
        // Most names are plain UTF-8 without the private-use characters: no copy beyond the String.
        if let text = String(validating: bytes, as: UTF8.self), !text.unicodeScalars.contains(where: isEscapedByte) {
            return text
        }
        return escaping(Array(bytes), rangeCharacters: true)
    }

    /// Text that holds names in their lossless form (a job file once its raw characters of the
    /// range are refused, the queue's stored spec): valid UTF-8 is taken as it is, U+10FF80-U+10FFFF
    /// included (they already stand for bytes), and a byte that is not UTF-8 is that byte, so a
    /// list written by a script that pasted raw names in still names those files.
    package static func decodeText<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> String {
        if let text = String(validating: bytes, as: UTF8.self) { return text }
        return escaping(Array(bytes), rangeCharacters: false)
    }

    /// `raw` with every byte that is not part of valid UTF-8 escaped and, with `rangeCharacters`,
    /// every byte of a U+10FF80-U+10FFFF character too.
    private static func escaping(_ raw: [UInt8], rangeCharacters: Bool) -> String {
        var out = String.UnicodeScalarView()
        var i = 0
        while i < raw.count {
            let length = sequenceLength(raw, at: i)
            guard length > 0 else {
                out.append(escaped(raw[i]))  // not UTF-8: this byte alone, then look again
                i += 1
                continue
            }
            let scalar = String(decoding: raw[i..<i + length], as: UTF8.self).unicodeScalars.first!
            if rangeCharacters && isEscapedByte(scalar) {
                for byte in raw[i..<i + length] { out.append(escaped(byte)) }
            } else {
                out.append(scalar)
            }
            i += length
        }
        return String(out)
    }

    /// JSON text with Python's form of a byte that is not UTF-8 (`os.fsdecode`, then `json.dumps`:
    /// a lone `\udcXX`, XX 80-FF), which no JSON parser takes, turned into vmerge's (U+10FFXX).
    package static func acceptingSurrogateEscapes(inJSON text: String) -> String {
        guard text.range(of: "\\udc", options: .caseInsensitive) != nil else { return text }
        let scalars = Array(text.unicodeScalars)
        var out = String.UnicodeScalarView()
        var i = 0
        var inString = false
        func hex(_ at: Int) -> UInt32? {
            guard at + 6 <= scalars.count, scalars[at + 1] == "u" else { return nil }
            return UInt32(String(String.UnicodeScalarView(scalars[at + 2..<at + 6])), radix: 16)
        }
        while i < scalars.count {
            let c = scalars[i]
            if !inString {
                if c == "\"" { inString = true }
                out.append(c)
                i += 1
                continue
            }
            if c == "\"" { inString = false }
            guard c == "\\", i + 1 < scalars.count else {
                out.append(c)
                i += 1
                continue
            }
            if let unit = hex(i) {
                // A high surrogate escape keeps its pair (a real character beyond U+FFFF).
                if (0xD800...0xDBFF).contains(unit), let low = hex(i + 6), (0xDC00...0xDFFF).contains(low) {
                    out.append(contentsOf: scalars[i..<i + 12])
                    i += 12
                    continue
                }
                if (0xDC80...0xDCFF).contains(unit) {
                    out.append(escaped(UInt8(unit & 0xFF)))
                    i += 6
                    continue
                }
            }
            out.append(c)  // any other escape: the backslash and the escaped character as they are
            out.append(scalars[i + 1])
            i += 2
        }
        return String(out)
    }

    /// The length of the valid UTF-8 sequence at `i` (RFC 3629: no overlong forms, no surrogates,
    /// nothing past U+10FFFF), or 0.
    private static func sequenceLength(_ raw: [UInt8], at i: Int) -> Int {
        let lead = raw[i]
        let (length, second): (Int, ClosedRange<UInt8>)
        switch lead {
        case 0x00...0x7F: return 1
        case 0xC2...0xDF: (length, second) = (2, 0x80...0xBF)
        case 0xE0: (length, second) = (3, 0xA0...0xBF)
        case 0xED: (length, second) = (3, 0x80...0x9F)
        case 0xE1...0xEF: (length, second) = (3, 0x80...0xBF)
        case 0xF0: (length, second) = (4, 0x90...0xBF)
        case 0xF1...0xF3: (length, second) = (4, 0x80...0xBF)
        case 0xF4: (length, second) = (4, 0x80...0x8F)
        default: return 0
        }
        guard i + length <= raw.count, second.contains(raw[i + 1]) else { return 0 }
        for k in 2..<length where !(0x80...0xBF).contains(raw[i + k]) { return 0 }
        return length
    }

    /// The bytes `name` stands for (see the type's comment).
    package static func bytes(of name: String) -> [UInt8] {
        guard name.unicodeScalars.contains(where: isEscapedByte) else { return Array(name.utf8) }
        var out: [UInt8] = []
        out.reserveCapacity(name.utf8.count)
        for scalar in name.unicodeScalars {
            if let byte = byte(of: scalar) {
                out.append(byte)
            } else {
                out.append(contentsOf: String(scalar).utf8)
            }
        }
        return out
    }

    /// A C string from the system (a folder entry, a resolved path, an argument) as a name.
    package static func decode(cString: UnsafePointer<CChar>) -> String {
        decode(UnsafeRawBufferPointer(start: cString, count: strlen(cString)))
    }

    /// A C string from the system (a folder entry, a resolved path) as a name, its bytes kept.
    package init(cString: UnsafePointer<CChar>) {
        bytes = Array(UnsafeRawBufferPointer(start: cString, count: strlen(cString)))
    }

    /// The longest start of `name` that is at most `bytes` bytes on disk, cut between characters.
    package static func prefix(_ name: String, bytes limit: Int) -> String {
        var out = String.UnicodeScalarView()
        var used = 0
        for scalar in name.unicodeScalars {
            used += isEscapedByte(scalar) ? 1 : String(scalar).utf8.count
            if used > limit { break }
            out.append(scalar)
        }
        return String(out)
    }

    /// The longest path vmerge takes, at every door (argv, --inputs-from, a job list, a job.json,
    /// a queue spec), measured as `byteCount`: Linux's PATH_MAX.
    package static let maxPathBytes = 4096

    /// Why a path is refused at a door, or nil: `field` names it ("an input", "'-o'"). Measured
    /// in the bytes the name has on disk: an escaped byte is one byte, not the four its escaped
    /// form takes in UTF-8 (on that form, a name of bytes that are not UTF-8 would reach the
    /// limit at a quarter of its length, and only at the doors that read text).
    package static func lengthProblem(of path: String, field: String) -> String? {
        bytes(of: path).count > maxPathBytes ? "\(field) is longer than \(maxPathBytes) bytes" : nil
    }

    /// Whether `text` holds bytes that are not UTF-8 (fine for a name, not for a title or a tag).
    package static func hasEscapedBytes(_ text: String) -> Bool { text.unicodeScalars.contains(where: isEscapedByte) }

    /// `name` in `folder`, as a person writes it: `merged/` and `merged` both give `merged/trip.mp4`
    /// (a folder typed with its slash must not show as `merged//trip.mp4` in messages and reports).
    package static func joined(_ folder: String, _ name: String) -> String {
        FileName(folder).appending(FileName(name)).escaped
    }
}
