import Foundation

/// The job key a video vmerge wrote carries in its "comment" tag (`JobTag`), read from the file's
/// own boxes (moov/udta/meta: the QuickTime "mdta" keys FFmpeg writes with use_metadata_tags):
/// how a rendition left published by a run killed before its video (see `PublishSet`) is known
/// as that job's own, as a poster is by `PosterKey`. Reads only the index, never the media.
package enum VideoKey {
    /// The key the video at `name` in `folder` carries (never through a link, never blocking).
    package static func key(of name: String, in folder: Int32 = AT_FDCWD) -> String? {
        let fd = POSIX.openat(folder, FileName(name), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC, 0)
        guard fd >= 0 else { return nil }
        let file = FileDescriptor(fd)
        guard let info = file.info, FileKind(mode: info.st_mode) == .regular else { return nil }
        return comment(in: FileBytes(file)).flatMap { JobTag(parsing: $0)?.key }
    }

    /// The "comment" tag's text, if the file has one where vmerge writes it.
    static func comment(in bytes: FileBytes) -> String? {
        guard let moov = child("moov", from: 0, to: bytes.size, in: bytes),
            let udta = child("udta", from: moov.start, to: moov.end, in: bytes),
            let meta = child("meta", from: udta.start, to: udta.end, in: bytes),
            // meta is a full box: its version and flags come first.
            let keys = child("keys", from: meta.start + 4, to: meta.end, in: bytes),
            let ilst = child("ilst", from: meta.start + 4, to: meta.end, in: bytes),
            keys.end - keys.start <= 1 << 16, ilst.end - ilst.start <= 1 << 20
        else { return nil }
        // keys: version and flags, a count, then per key its size, namespace and name.
        let table = bytes.read(keys.start, Int(keys.end - keys.start))
        var index = 0
        var offset = 8
        var wanted: UInt32?
        while offset + 8 <= table.count {
            let size = Int(bigEndian(table, offset))
            guard size >= 8, offset + size <= table.count else { return nil }
            index += 1
            if table[(offset + 4)..<(offset + 8)].elementsEqual("mdta".utf8),
                table[(offset + 8)..<(offset + size)].elementsEqual("comment".utf8)
            {
                wanted = UInt32(index)
                break
            }
            offset += size
        }
        guard let wanted else { return nil }
        // ilst: items whose type is the key's index, each holding a data box (type, locale, value).
        var item = ilst.start
        while let header = bytes.boxHeader(at: item, endingBy: ilst.end), header.size >= UInt64(header.headerSize),
            header.size <= UInt64(ilst.end - item)
        {
            let end = item + Int64(header.size)
            if bigEndian(header.type, 0) == wanted,
                let data = child("data", from: item + header.headerSize, to: end, in: bytes),
                data.end - data.start >= 8, data.end - data.start <= 1 << 16
            {
                return String(decoding: bytes.read(data.start + 8, Int(data.end - data.start - 8)), as: UTF8.self)
            }
            item = end
        }
        return nil
    }

    /// The first box of `type` between `start` and `end`: where its content starts and ends.
    private static func child(_ type: String, from start: Int64, to end: Int64, in bytes: FileBytes) -> (
        start: Int64, end: Int64
    )? {
        var offset = start
        while let header = bytes.boxHeader(at: offset, endingBy: end), header.size >= UInt64(header.headerSize),
            header.size <= UInt64(end - offset)
        {
            if header.type.elementsEqual(type.utf8) {
                return (offset + header.headerSize, offset + Int64(header.size))
            }
            offset += Int64(header.size)
        }
        return nil
    }

    private static func bigEndian(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
        guard offset + 4 <= bytes.count else { return 0 }
        return bytes[offset..<(offset + 4)].reduce(0) { $0 << 8 | UInt32($1) }
    }
}
