import Foundation
import VMergeCore

/// What a watcher's status file (`--status-file`) says: its state, the running job with its
/// inputs and progress (the worker's own `MergeProgress` JSON), and the jobs it finished last.
/// Written by `WatchStatusFile`, read back by the dashboard; `json` and `init(jsonObject:)` are
/// the one shape both use.
package struct WatchStatus: Sendable, Equatable {
    /// How every status file begins: an earlier one may be replaced, nothing else; the dashboard
    /// reads only files that begin so.
    package static let signature = "{\n  \"kind\": \"vmerge watch status\",\n"
    /// The finished jobs kept, newest first.
    package static let recentCount = 20
    /// The running job's inputs listed (the count says how many there are).
    package static let inputsListed = 20
    /// The dashboard reads a status file up to 256 KiB (`WatchStatusSource.limit`); a file is
    /// written well under that whatever the names in it: each text is cut by the bytes of its
    /// JSON form (a byte of a name that is not UTF-8 costs 12 there), and past this the oldest
    /// finished jobs, then the listed inputs, are left out.
    package static let largestFile = 64 * 1024
    /// Bytes of JSON kept of a finished job's error; of a name, an input or an output; of the
    /// inbox and out folders (the operator's paths: whole when they fit PATH_MAX in UTF-8).
    package static let errorBytes = 2048
    package static let nameBytes = 1024
    package static let folderBytes = 4096

    /// A job the watcher finished.
    package struct Finished: Sendable, Equatable {
        package enum Result: String, Sendable {
            case done, failed
            /// Back in the inbox, for later (SIGINT/SIGTERM, or too little space).
            case putBack = "put-back"
        }

        package var name: String
        package var result: Result
        package var error: String?
        package var finishedAt: Date
        /// The output's file name and bytes (done jobs).
        package var output: String?
        package var outputBytes: Int64?

        package init(
            name: String, result: Result, error: String? = nil, finishedAt: Date = Date(), output: String? = nil,
            outputBytes: Int64? = nil
        ) {
            self.name = name
            self.result = result
            self.error = error.map { JSON.cut($0, toBytes: WatchStatus.errorBytes) }
            self.finishedAt = finishedAt
            self.output = output
            self.outputBytes = outputBytes
        }
    }

    package var pid: Int64 = Int64(getpid())
    package var host = shortHostName
    package var inbox: String
    package var outbox: String
    /// starting, idle, working, waiting-for-space, waiting-for-inbox, stopped.
    package var state = "starting"
    package var job: String?
    package var jobStarted: Date?
    /// The running job's inputs as the log names them (the first `inputsListed`), and how many.
    package var inputs: [String] = []
    package var inputCount = 0
    package var progress: MergeProgress?
    /// Per cent of the running job encoded (as `progress` says, kept for older readers).
    package var percent: Double?
    package var done = 0
    package var failed = 0
    package var recent: [Finished] = []
    package var started = Date()
    package var updated = Date()

    package init(inbox: String, outbox: String) {
        self.inbox = inbox
        self.outbox = outbox
    }

    /// A finished job, newest first, the oldest dropped past `recentCount`.
    package mutating func record(_ finished: Finished) {
        recent.insert(finished, at: 0)
        if recent.count > WatchStatus.recentCount { recent.removeLast(recent.count - WatchStatus.recentCount) }
    }

    /// The status as its file holds it: at most `largestFile` bytes as `text(pretty: true)`
    /// writes it (see `largestFile`).
    package var json: JSON {
        let cut = trimmed()
        let running = job != nil
        var shownRecent = cut.recent.count
        var shownInputs = running ? cut.inputs.count : 0
        var size = cut.json(recent: shownRecent, inputs: shownInputs).text(pretty: true).utf8.count
        // Past the cap, the oldest finished jobs, then the last inputs, are left out. Each takes
        // at least its text unindented from the file: counting that off keeps the estimate at
        // or above the true size, so one more rendering (rarely two) is enough.
        while size > WatchStatus.largestFile && shownRecent + shownInputs > 0 {
            if shownRecent > 0 {
                shownRecent -= 1
                size -= cut.recent[shownRecent].json.text(pretty: true).utf8.count
            } else {
                shownInputs -= 1
                size -= JSON.string(cut.inputs[shownInputs]).text().utf8.count
            }
            guard size <= WatchStatus.largestFile else { continue }
            size = cut.json(recent: shownRecent, inputs: shownInputs).text(pretty: true).utf8.count
        }
        return cut.json(recent: shownRecent, inputs: shownInputs)
    }

    /// This status with each text cut to its bytes of JSON (`nameBytes`, `errorBytes`,
    /// `folderBytes`), once: the renderings above share the cuts.
    private func trimmed() -> WatchStatus {
        let name = { (text: String) in JSON.cut(text, toBytes: WatchStatus.nameBytes) }
        var cut = self
        cut.inbox = JSON.cut(inbox, toBytes: WatchStatus.folderBytes)
        cut.outbox = JSON.cut(outbox, toBytes: WatchStatus.folderBytes)
        (cut.host, cut.state, cut.job) = (name(host), name(state), job.map(name))
        cut.inputs = inputs.map(name)
        cut.progress?.file = progress?.file.map(name)
        cut.recent = recent.map { finished in
            var finished = finished
            (finished.name, finished.output) = (name(finished.name), finished.output.map(name))
            finished.error = finished.error.map { JSON.cut($0, toBytes: WatchStatus.errorBytes) }
            return finished
        }
        return cut
    }

    /// The status with its newest `recent` finished jobs and first `inputs` inputs.
    private func json(recent shownRecent: Int, inputs shownInputs: Int) -> JSON {
        let running = job != nil
        return .object([
            ("kind", .string("vmerge watch status")),
            ("pid", .int(pid)),
            ("host", .string(host)),
            ("inbox", .string(inbox)),
            ("outbox", .string(outbox)),
            ("state", .string(state)),
            ("job", .string(job)),
            ("job_started_at", .string(running ? jobStarted.map(WatchStatus.timestamp) : nil)),
            ("inputs", .array(running ? inputs.prefix(shownInputs).map { .string($0) } : [])),
            ("input_count", .int(running ? inputCount : 0)),
            ("progress", running ? progress?.json ?? .null : .null),
            ("percent", .number(running ? percent : nil)),
            ("jobs_done", .int(done)),
            ("jobs_failed", .int(failed)),
            ("recent", .array(recent.prefix(shownRecent).map(\.json))),
            ("started_at", .string(WatchStatus.timestamp(started))),
            ("updated_at", .string(WatchStatus.timestamp(updated))),
        ])
    }

    static func timestamp(_ date: Date) -> String { ISO8601DateFormatter().string(from: date) }
}

extension WatchStatus.Finished {
    var json: JSON {
        .object([
            ("name", .string(name)),
            ("result", .string(result.rawValue)),
            ("error", .string(error)),
            ("finished_at", .string(WatchStatus.timestamp(finishedAt))),
            ("output", .string(output)),
            ("output_bytes", .int(outputBytes)),
        ])
    }
}

extension WatchStatus {
    /// Why a status file's text is not a status.
    package struct Unreadable: Error, Sendable, Equatable {
        package let reason: String
    }

    /// A status read back from a file's bytes (`data`): JSON as `json` writes it. Fields a
    /// reader needs (kind, state, the times) must be there and of their type; the rest may be
    /// missing (an older vmerge's file) and are then empty.
    package init(reading data: Data) throws(Unreadable) {
        let object: [String: Any]
        do {
            object = try JobFile.object(from: data)
        } catch {
            throw Unreadable(reason: error.description)
        }
        guard object["kind"] as? String == "vmerge watch status" else { throw Unreadable(reason: "not a vmerge watch status") }
        guard let state = object["state"] as? String else { throw Unreadable(reason: "no 'state'") }
        guard let updated = WatchStatus.date(object["updated_at"]), let started = WatchStatus.date(object["started_at"])
        else { throw Unreadable(reason: "no 'updated_at' or 'started_at' time") }
        self.init(inbox: object["inbox"] as? String ?? "", outbox: object["outbox"] as? String ?? "")
        (self.state, self.updated, self.started) = (state, updated, started)
        pid = WatchStatus.whole(object["pid"]) ?? 0
        host = object["host"] as? String ?? ""
        job = object["job"] as? String
        jobStarted = WatchStatus.date(object["job_started_at"])
        inputs = Array(((object["inputs"] as? [Any]) ?? []).compactMap { $0 as? String }.prefix(WatchStatus.inputsListed))
        inputCount = WatchStatus.whole(object["input_count"]).map(Int.init) ?? inputs.count
        progress = (object["progress"] as? [String: Any]).flatMap(MergeProgress.init(jsonObject:))
        percent = (object["percent"] as? NSNumber)?.doubleValue.nonNegativeFinite
        done = WatchStatus.whole(object["jobs_done"]).map(Int.init) ?? 0
        failed = WatchStatus.whole(object["jobs_failed"]).map(Int.init) ?? 0
        recent = ((object["recent"] as? [Any]) ?? []).prefix(WatchStatus.recentCount).compactMap { item in
            guard let item = item as? [String: Any], let name = item["name"] as? String,
                let result = (item["result"] as? String).flatMap(Finished.Result.init(rawValue:)),
                let finishedAt = WatchStatus.date(item["finished_at"])
            else { return nil }
            return Finished(
                name: name, result: result, error: item["error"] as? String, finishedAt: finishedAt,
                output: item["output"] as? String, outputBytes: WatchStatus.whole(item["output_bytes"]))
        }
    }

    /// A count from outside: a number, pinned to 0...Int64.max (a hostile 1e300 is no trap).
    private static func whole(_ value: Any?) -> Int64? {
        (value as? NSNumber)?.doubleValue.nonNegativeFinite.map { Int64(saturating: $0) }
    }

    private static func date(_ value: Any?) -> Date? {
        (value as? String).flatMap { ISO8601DateFormatter().date(from: $0) }
    }
}

extension Double {
    fileprivate var nonNegativeFinite: Double? { isFinite ? Swift.max(0, self) : nil }
}
