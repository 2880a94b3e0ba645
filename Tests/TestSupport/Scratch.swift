import Foundation

// XCTest is there only when tests are built: a plain `swift build` (make run, make release)
// builds this target too, and must not need it.
#if canImport(XCTest)
    import XCTest
#endif

/// A fresh folder for the running test, under the system's temporary folder. It is removed when
/// that test ends, unless the test failed: then it is kept, and its path printed, to be looked at.
public func makeScratchDirectory() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("vmerge-test-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    #if canImport(XCTest)
        ScratchJanitor.shared.adopt(url)
    #endif
    return url
}

/// A fresh folder that lasts the whole run, for what a class makes once and all its tests read
/// (one merge checked many ways). It is removed when the run ends, unless a test failed.
public func makeRunScratchDirectory() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("vmerge-test-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    #if canImport(XCTest)
        ScratchJanitor.shared.adopt(url, forTheRun: true)
    #endif
    return url
}

/// The names in `directory`, sorted (empty if it cannot be read).
public func listing(_ directory: URL) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).sorted()
}

/// A JSON object written by vmerge (a report, a status file).
public func jsonObject(at url: URL) throws -> [String: Any] {
    guard let object = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any] else {
        throw NotAnObject(path: url.path)
    }
    return object
}

/// A file that holds JSON, but not an object.
public struct NotAnObject: Error, CustomStringConvertible {
    public let path: String
    public var description: String { "\(path): not a JSON object" }
}

/// Removes `path` and everything under it, by bytes (names need not be UTF-8). Folders are made
/// writable and searchable first (tests make some read-only); links are removed, never followed.
/// Whether nothing is left.
@discardableResult
public func removeTree(_ path: String) -> Bool {
    removeEntry(in: AT_FDCWD, Array(path.utf8CString))
}

private func removeEntry(in parent: Int32, _ name: [CChar]) -> Bool {
    var info = stat()
    guard fstatat(parent, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { return errno == ENOENT }
    guard info.st_mode & S_IFMT == S_IFDIR else { return unlinkat(parent, name, 0) == 0 }
    _ = fchmodat(parent, name, 0o700, 0)
    let fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
    guard fd >= 0 else { return false }
    guard let folder = fdopendir(fd) else {
        close(fd)
        return false
    }
    var children: [[CChar]] = []
    while let entry = readdir(folder) {
        let child = withUnsafeBytes(of: entry.pointee.d_name) { raw in
            Array(raw.bindMemory(to: CChar.self).prefix { $0 != 0 }) + [0]
        }
        if child != [46, 0] && child != [46, 46, 0] { children.append(child) }
    }
    var removed = true
    for child in children where !removeEntry(in: dirfd(folder), child) { removed = false }
    closedir(folder)
    return unlinkat(parent, name, AT_REMOVEDIR) == 0 && removed
}

#if canImport(XCTest)
/// Removes each test's scratch folders when it ends (an XCTest observer, registered by the first
/// folder made): those of a failed test are kept and named on stdout. A folder made outside a
/// test goes when the next test ends; one made for the run, when the run ends without a failure.
final class ScratchJanitor: NSObject, XCTestObservation, @unchecked Sendable {
    static let shared = ScratchJanitor()

    private let lock = NSLock()
    private var registered = false
    private var pending: [URL] = []
    private var forTheRun: [URL] = []
    private var failures = 0

    func adopt(_ url: URL, forTheRun lasting: Bool = false) {
        let register = lock.withLock {
            if lasting { forTheRun.append(url) } else { pending.append(url) }
            defer { registered = true }
            return !registered
        }
        if register { XCTestObservationCenter.shared.addTestObserver(self) }
    }

    func testCaseDidFinish(_ testCase: XCTestCase) {
        let failed = testCase.testRun.map { !$0.hasSucceeded } ?? false
        let folders = lock.withLock {
            defer { pending = [] }
            if failed { failures += 1 }
            return pending
        }
        sweep(folders, keeping: failed ? "\(testCase.name) failed" : nil)
    }

    func testBundleDidFinish(_ testBundle: Bundle) {
        let (folders, failed) = lock.withLock {
            defer { (pending, forTheRun) = ([], []) }
            return (pending + forTheRun, failures > 0)
        }
        sweep(folders, keeping: failed ? "the run had failures" : nil)
    }

    private func sweep(_ folders: [URL], keeping reason: String?) {
        for folder in folders {
            if let reason {
                print("\(reason): its scratch folder is kept: \(folder.path)")
            } else if !removeTree(folder.path) {
                print("could not remove the scratch folder \(folder.path)")
            }
        }
    }
}
#endif
