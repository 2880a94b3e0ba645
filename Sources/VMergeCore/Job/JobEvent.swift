import Foundation

/// What is said of a job when something happens to it (`--notify`, a job's `notify`): its
/// type, the job (name, output, its queue id when it has one), the caller's `metadata` given
/// back as it came, and the event's own data (the report of a job done, the error of one failed
/// and whether a retry could cure it, how far it has got). Rendered as Standard Webhooks'
/// payload: `{"type", "timestamp", "data"}`.
package struct JobEvent: Sendable, Equatable {
    package enum Kind: String, Sendable, CaseIterable {
        case started = "job.started"
        case progress = "job.progress"
        case completed = "job.completed"
        case failed = "job.failed"
        case cancelled = "job.cancelled"
    }

    package var kind: Kind
    package var job: String
    package var output: String
    package var queueID: Int64?
    package var metadata: JSON?
    package var data: [(String, JSON)]
    /// When it happened.
    package var at: Date

    package init(
        _ kind: Kind, job: String, output: String, queueID: Int64? = nil, metadata: JSON? = nil,
        data: [(String, JSON)] = [], at: Date = Date()
    ) {
        self.kind = kind
        self.job = job
        // Receivers are outside: an https output's query never reaches them.
        self.output = RemoteName.printable(output)
        self.queueID = queueID
        self.metadata = metadata
        self.data = data
        self.at = at
    }

    package static func == (a: JobEvent, b: JobEvent) -> Bool { a.payload == b.payload }

    /// The body sent: `{"type": "job.completed", "timestamp": "...Z", "data": {...}}`.
    package var payload: JSON {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let job: JSON = .object([("name", .string(job)), ("output", .string(output)), ("id", .int(queueID))])
        return .object([
            ("type", .string(kind.rawValue)), ("timestamp", .string(formatter.string(from: at))),
            ("data", .object([("job", job), ("metadata", metadata ?? .null)] + data)),
        ])
    }
}
