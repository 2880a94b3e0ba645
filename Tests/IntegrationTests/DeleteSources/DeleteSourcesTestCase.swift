import Foundation
import TestSupport
import XCTest

/// --delete-sources through the built binary: after success only, and only what was consumed. The
/// classes are named by the door that deletes (MergeDeleteSourcesTests, BatchDeleteSourcesTests,
/// WatchJobDeleteSourcesTests); this is what they share. SourceRemoval's own checks are in
/// SourceRemovalTests (VMergeJobsTests), the merge's refusal of a file replaced since its probe in
/// ProbedFileTests (VMergeAVTests), a watch job's hostile cases (a forged job key, clips not merged
/// or merged in part) in HostileJobs/WatchDeleteSourcesTests.
class DeleteSourcesTestCase: XCTestCase {
    /// Copies of fixtures into `dir` under short names.
    func copies(_ names: [(String, String)], in dir: URL) throws -> [String] {
        try names.map { prefix, name in
            try FileManager.default.copyItem(atPath: Fixtures.path(prefix), toPath: dir.appendingPathComponent(name).path)
            return name
        }
    }
}
