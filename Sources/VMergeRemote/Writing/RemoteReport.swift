import Foundation
import VMergeCore

/// A JSON report in a bucket (`--report s3://bucket/runs/trip.json`), written by the rule a
/// report on disk keeps: over nothing, over an earlier vmerge report, over what this run wrote
/// itself, or (-y) over whatever is there; and each write conditional on the object it looked at
/// (`If-Match` its ETag, `If-None-Match: *` for none), so an object put there meanwhile by
/// someone else is never replaced. A report is small: it goes up in one PUT from memory, with
/// its SHA-256, marked as a vmerge report in its metadata (what lets a later run replace it).
package final class RemoteReport: @unchecked Sendable {
    package let address: S3Address
    private let client: S3Client
    private let overwrite: Bool
    /// The ETag of what this run last wrote (its own to write again).
    private var written: String?
    /// What the name held when the run began: with -y, the one object a write may replace
    /// besides a report (an object put there later by someone else is not).
    private var seen: S3Object?

    /// Marks an object as a vmerge report (the disk's first bytes, `RunReport.signatures`).
    static let markField = "vmerge-report"

    /// Finds the client and checks, before any work, that the report may be written there.
    package init(_ address: S3Address, connector: RemoteConnector, overwrite: Bool) throws {
        guard !address.isPrefix else { throw RemoteReport.refusal(address, "a report is an object, not a prefix") }
        // A stopped run still writes its report (cancelled), bounded by the client's timeouts.
        do { client = try connector.s3Client().withoutStopping() } catch {
            throw RemoteReport.refusal(address, "\(error)")
        }
        self.address = address
        self.overwrite = overwrite
        do { seen = try client.lookUp(address) } catch { throw RemoteReport.refusal(address, error.message) }
        // Checked on what was just looked at: one HEAD, not a second.
        _ = try condition(holding: seen)
    }

    /// Writes `text` under the name; returns once S3 holds it.
    package func write(_ text: String) throws {
        let condition = try condition()
        do {
            written = try client.put(
                address, bytes: Data(text.utf8), condition: condition, metadata: [RemoteReport.markField: "1"],
                contentType: "application/json")
        } catch  where error.kind == .preconditionFailed {
            throw RemoteReport.refusal(address, "another object was put under this name meanwhile; not replaced")
        } catch {
            throw RemoteReport.refusal(address, error.message)
        }
    }

    /// What a write may replace, as the name holds now.
    private func condition() throws -> WriteCondition {
        do { return try condition(holding: try client.lookUp(address)) } catch let failure as S3Failure {
            throw RemoteReport.refusal(address, failure.message)
        }
    }

    /// What a write may replace when the name holds `current`.
    private func condition(holding current: S3Object?) throws -> WriteCondition {
        guard let current else { return .absent }
        let ours = current.etag == written || current.metadata[RemoteReport.markField] != nil
        guard ours || (overwrite && current.etag == seen?.etag) else {
            throw RemoteReport.refusal(
                address,
                current.etag != seen?.etag
                    ? "an object that is not a vmerge report was put there while the job ran; not replaced"
                    : "an object that is not a vmerge report is there (use -y to replace it)")
        }
        return .unchanged(etag: current.etag)
    }

    private static func refusal(_ address: S3Address, _ reason: String) -> VMergeError {
        .io(file: address.description, message: "cannot write the report: \(reason)")
    }
}
