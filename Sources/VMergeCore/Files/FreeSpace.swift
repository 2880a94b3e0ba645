import Foundation

/// The free-space check made before a merge starts, so a run that cannot finish fails at once
/// instead of after an hour of encoding.
package enum FreeSpace {
    /// What is always kept free on top of the output.
    package static let margin: Int64 = 1 << 20

    /// Bytes available to this user in the folder holding `path`, or nil if unknown.
    package static func available(inFolderOf path: String) -> Int64? {
        let folder = SafeFile.split(path).folder
        var info = statvfs()
        guard POSIX.statvfs(FileName(folder), &info) == 0 else { return nil }
        // Some network and FUSE file systems report "unlimited" as all ones.
        return Int64(clamping: info.f_bavail).multipliedSaturating(by: Int64(clamping: info.f_frsize))
    }

    /// The size of the file system holding `path`, or nil if unknown.
    package static func capacity(inFolderOf path: String) -> Int64? {
        let folder = SafeFile.split(path).folder
        var info = statvfs()
        guard POSIX.statvfs(FileName(folder), &info) == 0 else { return nil }
        return Int64(clamping: info.f_blocks).multipliedSaturating(by: Int64(clamping: info.f_frsize))
    }

    /// A generous guess at the output's size: CRF output varies with the footage, so this
    /// takes a bit rate that busy phone footage reaches (0.07 / 0.12 / 0.25 bits per pixel for
    /// low / medium / high) plus the AAC rate, capped by --max-size.
    package static func estimatedOutputBytes(durationMicros: Int64, options: MergeOptions) -> Int64 {
        let size = options.outputSize
        let bitsPerPixel: Double
        switch options.quality {
        case .low: bitsPerPixel = 0.07
        case .medium: bitsPerPixel = 0.12
        case .high: bitsPerPixel = 0.25
        }
        let videoBits = Double(size.width) * Double(size.height) * options.frameRate.doubleValue * bitsPerPixel
        let audioBits = Double(options.audioBitRate)
        let bytes = Int64(saturating: (videoBits + audioBits) / 8 * Double(durationMicros) / 1e6)
        return min(bytes, options.maxSize ?? Int64.max)
    }

    /// Throws unless the output folder has `required` bytes free (default: the margin plus
    /// the estimate).
    package static func check(output: String, durationMicros: Int64, options: MergeOptions, required: Int64?) throws {
        guard let available = available(inFolderOf: output) else { return }
        // Every file the job makes: its own and each rendition's.
        let estimate = options.pictures.reduce(Int64(0)) {
            $0.addingSaturating(estimatedOutputBytes(durationMicros: durationMicros, options: $1))
        }
        let needed = required ?? margin + estimate
        guard available < needed else { return }
        let why =
            required != nil
            ? "--min-free asks for \(ByteSize.format(needed))"
            : "it needs \(ByteSize.format(needed)) (an estimated \(ByteSize.format(estimate)) of output + 1 MiB)"
        let message = "not enough free space: \(ByteSize.format(available)) free in its folder, \(why)"
        if let capacity = capacity(inFolderOf: output), capacity < needed {
            // Waiting for room would be waiting for ever.
            throw VMergeError.cannotFit(
                file: output, message: message + "; its file system holds only \(ByteSize.format(capacity)) in all")
        }
        throw VMergeError.noSpace(file: output, message: message)
    }
}
