import Foundation
import VMergeCore
import VMergeQueue

/// A job as the API answers it: its state and attempts, when it was added, started and
/// finished (UTC, ISO 8601), its inputs and output (an https name's query shown as `?…`), how far
/// it has got, the last attempt's error, and its report once an attempt has ended (the document
/// `vmerge --report` writes, as the worker stored it).
enum APIJobJSON {
    static func of(_ detail: JobDetail) -> JSON {
        .object([
            ("id", .int(detail.id)), ("name", .string(detail.name)), ("state", .string(detail.state.rawValue)),
            ("attempts", .int(detail.attempts)), ("max_attempts", .int(detail.maxAttempts)),
            ("worker", .string(detail.worker)), ("created_at", time(detail.createdAt)),
            ("started_at", time(detail.startedAt)), ("finished_at", time(detail.finishedAt)),
            ("inputs", .array(detail.job?.inputs.map { .string(RemoteName.printable($0.path.escaped)) } ?? [])),
            ("output", .string(detail.job.map { RemoteName.printable($0.output.escaped) })),
            // How far it has got while it runs, and a done job's end: a failed or queued job's
            // last progress would say "continue" of an attempt that is over.
            ("progress", [.running, .done].contains(detail.state) ? detail.progress?.json ?? .null : .null),
            ("error", .string(detail.error)),
            ("report", detail.report.map { .raw($0) } ?? .null),
        ])
    }

    private static func time(_ seconds: Double?) -> JSON {
        guard let seconds else { return .null }
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        return .string(formatter.string(from: Date(timeIntervalSince1970: seconds.rounded(.down))))
    }
}
