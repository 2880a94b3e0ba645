/// One event a run sent (`--notify`), as its report records it: where (its URL as it may be
/// shown), which event, whether the receiver took it, after how many tries, and the last
/// reason it did not.
package struct NotificationRecord: Sendable, Equatable {
    package var url: String
    package var event: String
    package var delivered: Bool
    package var attempts: Int
    package var error: String?

    package init(url: String, event: String, delivered: Bool, attempts: Int, error: String?) {
        self.url = url
        self.event = event
        self.delivered = delivered
        self.attempts = attempts
        self.error = error
    }

    var json: JSON {
        .object([
            ("url", .string(url)), ("event", .string(event)), ("delivered", .bool(delivered)),
            ("attempts", .int(attempts)), ("error", .string(delivered ? nil : error)),
        ])
    }
}
