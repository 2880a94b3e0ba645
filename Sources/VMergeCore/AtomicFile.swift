import Foundation

/// Small files (reports, status, error notes) written whole or not at all: a temporary file in
/// the same folder, then a rename, so a reader or a crash never sees half a file.
public enum AtomicFile {
    /// - Parameter tag: names the temporary file (".<name>.vmerge-<tag>.tmp") so a dead watch
    ///   worker's leftovers can be found; default: pid and a random number.
    public static func write(_ text: String, to path: String, tag: String? = nil) throws {
        let url = URL(fileURLWithPath: path)
        let token = tag ?? "\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let temporary = url.deletingLastPathComponent().path + "/." + url.lastPathComponent + ".vmerge-\(token).tmp"
        do {
            try Data(text.utf8).write(to: URL(fileURLWithPath: temporary))
        } catch {
            unlink(temporary)
            throw VMergeError.io(file: path, message: "cannot write: \(reason(error))")
        }
        guard rename(temporary, path) == 0 else {
            let why = String(cString: strerror(errno)).lowercased()
            unlink(temporary)
            throw VMergeError.io(file: path, message: "cannot write: \(why)")
        }
    }

    private static func reason(_ error: Error) -> String {
        let underlying = (error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError
        if let code = underlying?.code, underlying?.domain == NSPOSIXErrorDomain {
            return String(cString: strerror(Int32(code))).lowercased()
        }
        return error.localizedDescription
    }
}
