import Foundation
import VMergeCore

/// A report named where it would take the place of the output, an input or the poster: a usage
/// error, found before any work.
package struct ReportClash: Error, CustomStringConvertible {
    /// The report's path, and what it would take the place of.
    package let file: String
    package let reason: String
    package var description: String { "\(file): \(reason)" }
}

/// Where a JSON report (of a merge or a batch) may go, and how it is published: never onto the
/// output, an input or a job list; over an existing file only if it is an earlier vmerge report
/// (or with -y), and never over a link, FIFO or device.
package enum ReportTarget {
    /// A report's file and what it may replace there.
    package struct Named: Sendable {
        package var path: String
        package var replace: ReplacePolicy

        package init(_ path: String, overwrite: Bool) {
            (self.path, replace) = (path, ReportTarget.policy(overwrite: overwrite))
        }
    }

    package static func policy(overwrite: Bool) -> ReplacePolicy {
        overwrite ? .always : .ifStartsWith(RunReport.signatures)
    }

    /// Refuses (a usage error) a report that would take the place of one of `others` (each with
    /// what it is: "the output video"), then checks its name as a target and makes its temporary
    /// file, so a report that cannot be written is known before any work.
    package static func prepare(_ path: String, against others: [(path: String, role: String)], overwrite: Bool) throws
        -> TemporaryFile
    {
        let report = PathIdentity.of(path)
        if let clash = others.first(where: { PathIdentity.of($0.path) == report }) {
            throw ReportClash(file: path, reason: "the report would overwrite \(clash.role)")
        }
        do {
            try SafeFile.checkTarget(path, replace: policy(overwrite: overwrite))
            // A run killed with -9 left its report's temporary behind.
            let (folder, name) = SafeFile.split(path)
            TemporaryFile.sweep(folder: folder, target: name)
            return try TemporaryFile(beside: path)
        } catch let error as VMergeError {
            throw VMergeError.io(file: path, message: "cannot write the report: \(error.reason)")
        }
    }

    package static func publish(_ json: JSON, in file: TemporaryFile, overwrite: Bool) throws {
        do {
            try file.write(Array((json.text(pretty: true) + "\n").utf8))
            try file.publish(replace: policy(overwrite: overwrite))
        } catch let error as VMergeError {
            throw VMergeError.io(file: file.target, message: "cannot write the report: \(error.reason)")
        }
    }
}
