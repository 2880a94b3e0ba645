import Foundation

/// How inputs are ordered before merging.
package enum InputOrder: String, Sendable, CaseIterable {
    /// Natural order of the path: clip2 before clip10.
    case name
    /// Oldest modification time first; ties in natural name order.
    case mtime
    /// As given.
    case none
    /// Oldest recording first, by the time the container says (MP4/QuickTime `creation_time` or
    /// `com.apple.quicktime.creationdate`, Matroska's DateUTC: the most precise); ties and
    /// clips without one by name, those after the others. Read when the job runs (`JobRunner`):
    /// here, before that, it is the name order.
    case recorded

    /// What the order is, for the dry run's first line.
    package var meaning: String {
        switch self {
        case .name: "by name, in natural order"
        case .mtime: "by modification time, oldest first, then by name"
        case .none: "as given"
        case .recorded: "by the time each clip was recorded, as its container says, oldest first, then by name"
        }
    }
}

/// Turns what the user named (files, folders, list files) into the ordered list of inputs.
package enum InputList {
    /// Extensions a folder is searched for, compared without case.
    package static let videoExtensions: Set<String> = ["mov", "mp4", "m4v", "3gp"]
    /// An input list (--inputs-from) larger than this is refused: stdin may be endless.
    package static let maxListBytes = 16 << 20
    /// The files a job's inputs come to once its folders are listed (a folder is one of the
    /// `JobFile.maxInputs` inputs a job may name).
    package static let maxListed = 100_000

    /// The paths in an input list: one per line; blank lines and lines starting with '#'
    /// ignored; surrounding spaces and a Windows '\r' trimmed (a path's inner spaces are kept).
    package static func parse(_ text: String) -> [String] {
        // Editors on Windows start UTF-8 files with a byte-order mark.
        let text = text.hasPrefix("\u{FEFF}") ? String(text.dropFirst()) : text
        return text.split(omittingEmptySubsequences: true, whereSeparator: { $0 == "\n" || $0 == "\r\n" })
            .map { $0.trimmingCharacters(in: .whitespaces.union(CharacterSet(charactersIn: "\r"))) }
            .filter { !$0.isEmpty && !$0.hasPrefix("#") }
    }

    /// Replaces every folder in `paths` by its video files (not recursive, hidden files
    /// skipped) in natural order, or by modification time for `.mtime`; then orders the
    /// explicit list as asked. A folder without videos is an error: it is almost always a
    /// wrong path. So is, in a confined job, a link posing as a video: it is not left out silently.
    package static func expand(_ paths: [String], order: InputOrder, confinedTo confinement: InputConfinement? = nil)
        throws -> [String]
    {
        try expand(paths.map { JobInput($0) }, order: order, confinedTo: confinement).map(\.path.escaped)
    }

    private typealias Listing = (folder: FileDescriptor, names: [String])

    /// The folder's entries, or nil when `path` is not a folder.
    private static func folderListing(_ path: FileName, confinedTo confinement: InputConfinement?) throws -> Listing? {
        if let confinement {
            guard try SafeFile.kind(of: path.escaped, confinedTo: confinement) == .directory else { return nil }
            return try SafeFile.names(of: path.escaped, confinedTo: confinement)
        }
        var info = stat()
        guard POSIX.stat(path, &info) == 0, FileKind(mode: info.st_mode) == .directory else { return nil }
        let folder = FileDescriptor(POSIX.open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC))
        guard folder.raw >= 0, let names = SafeFile.names(in: folder) else {
            throw VMergeError.invalidInput(file: path.escaped, reason: "cannot list this folder")
        }
        return (folder, names)
    }

    /// The folder's video files (not hidden, by extension), as paths under it, in listing order.
    /// Inside a confined job a link is refused; outside one a link to a file is the user's own
    /// business.
    private static func videoFiles(in listing: Listing, of path: FileName, confined: Bool) throws -> [FileName] {
        let isVideo = { (name: String) in
            !name.hasPrefix(".") && videoExtensions.contains(FileName(name).pathExtension.lowercased())
        }
        var videos: [FileName] = []
        for name in listing.names where isVideo(name) {
            var info = stat()
            let kind: FileKind
            if confined {
                kind = SafeFile.kind(of: name, in: listing.folder)
            } else {
                kind = POSIX.fstatat(listing.folder.raw, FileName(name), &info, 0) == 0 ? FileKind(mode: info.st_mode) : .missing
            }
            if kind == .regular {
                videos.append(path.appending(FileName(name)))
            } else if kind == .symlink {
                throw VMergeError.invalidInput(
                    file: path.appending(FileName(name)).escaped, reason: "is a symbolic link (a job's inputs must be files in its folder)")
            }
        }
        return videos
    }

    /// The same for inputs with edits: an edited input stays with its edit wherever the order
    /// puts it; a trim or a title on a folder is refused (it would apply to every file in it).
    package static func expand(_ inputs: [JobInput], order: InputOrder, confinedTo confinement: InputConfinement? = nil)
        throws -> [JobInput]
    {
        var result: [JobInput] = []
        // A folder named twice is listed once.
        var expanded: [FileName: [JobInput]] = [:]
        for input in inputs {
            let path = input.path
            if let videos = expanded[path] {
                if input.edit != .whole { throw editedFolder(path) }
                if result.count + videos.count > maxListed { throw tooMany(path) }
                result += videos
                continue
            }
            guard let listing = try folderListing(path, confinedTo: confinement) else {
                result.append(input)  // a file: opened (and refused if need be) like any input
                continue
            }
            if input.edit != .whole { throw editedFolder(path) }
            let videos = try videoFiles(in: listing, of: path, confined: confinement != nil)
            if videos.isEmpty {
                throw VMergeError.invalidInput(
                    file: path.escaped, reason: "folder has no video files (.mov, .mp4, .m4v, .3gp)")
            }
            // Folders named again and again (a job.json listing "." thousands of times) must not
            // grow without bound.
            if result.count + videos.count > maxListed { throw tooMany(path) }
            // By name: the folder part is the same for all.
            let ordered =
                order == .mtime
                ? sorted(videos.map { JobInput($0) }, by: .mtime)
                : naturallySorted(videos) { $0.lastComponent.escaped }.map { JobInput($0) }
            expanded[path] = ordered
            result += ordered
        }
        return sorted(result, by: order)
    }

    private static func editedFolder(_ path: FileName) -> VMergeError {
        .invalidInput(file: path.escaped, reason: "is a folder; a trim or a title applies to one video file")
    }

    private static func tooMany(_ path: FileName) -> VMergeError {
        .invalidInput(file: path.escaped, reason: "the inputs come to more than \(maxListed) files; at most \(maxListed)")
    }

    package static func sorted(_ paths: [String], by order: InputOrder) -> [String] {
        sorted(paths.map { JobInput($0) }, by: order).map(\.path.escaped)
    }

    /// Inputs in `order` by their paths (stable: the same file twice keeps its edits' order).
    package static func sorted(_ inputs: [JobInput], by order: InputOrder) -> [JobInput] {
        switch order {
        case .none: return inputs
        case .name, .recorded: return naturallySorted(inputs) { $0.path.escaped }
        case .mtime:
            let times = Dictionary(inputs.map { ($0.path, modificationTime($0.path)) }, uniquingKeysWith: { a, _ in a })
            return inputs.enumerated().sorted {
                let (a, b) = (times[$0.element.path] ?? 0, times[$1.element.path] ?? 0)
                if a != b { return a < b }
                let byName = naturalCompare($0.element.path.escaped, $1.element.path.escaped)
                return byName != 0 ? byName < 0 : $0.offset < $1.offset
            }.map(\.element)
        }
    }

    /// Compares strings with runs of digits taken as numbers ("clip2" < "clip10"), letters
    /// without case first, then exactly, so the order is total and stable.
    package static func naturalCompare(_ a: String, _ b: String) -> Int {
        naturalCompare(Array(a.unicodeScalars), Array(b.unicodeScalars), a, b)
    }

    /// `items` in natural order of `name`, each name split into scalars once (not once per
    /// comparison: a folder of thousands of clips sorts in milliseconds).
    package static func naturallySorted<T>(_ items: [T], by name: (T) -> String) -> [T] {
        let keyed = items.map { item -> (scalars: [Unicode.Scalar], name: String, item: T) in
            let text = name(item)
            return (Array(text.unicodeScalars), text, item)
        }
        return keyed.sorted { naturalCompare($0.scalars, $1.scalars, $0.name, $1.name) < 0 }.map(\.item)
    }

    private static func naturalCompare(_ x: [Unicode.Scalar], _ y: [Unicode.Scalar], _ a: String, _ b: String)
        -> Int
    {
        var i = 0, j = 0
        while i < x.count && j < y.count {
            if isDigit(x[i]) && isDigit(y[j]) {
                let si = i, sj = j
                while i < x.count && isDigit(x[i]) { i += 1 }
                while j < y.count && isDigit(y[j]) { j += 1 }
                // Compare the numbers by value without overflow: strip zeros, then length, then digits.
                let p = x[si..<i].drop { $0 == "0" }, q = y[sj..<j].drop { $0 == "0" }
                if p.count != q.count { return p.count < q.count ? -1 : 1 }
                for (c, d) in zip(p, q) where c != d { return c.value < d.value ? -1 : 1 }
            } else {
                let c = lowered(x[i]), d = lowered(y[j])
                if c != d { return c < d ? -1 : 1 }
                i += 1
                j += 1
            }
        }
        if x.count - i != y.count - j { return x.count - i < y.count - j ? -1 : 1 }
        return a == b ? 0 : (a < b ? -1 : 1)
    }

    private static func isDigit(_ c: Unicode.Scalar) -> Bool { ("0"..."9").contains(c) }
    private static func lowered(_ c: Unicode.Scalar) -> UInt32 {
        ("A"..."Z").contains(c) ? c.value + 32 : c.value
    }

    private static func modificationTime(_ path: FileName) -> Double {
        var info = stat()
        guard POSIX.stat(path, &info) == 0 else { return 0 }
        return Double(modificationNanos(info)) / 1e9
    }
}
