import Foundation
import VMergeCore

/// "When will it be done": how far the queue's current wave has got (the jobs added since the
/// oldest job still queued or running was added: everything added since the queue was last
/// empty), how fast jobs finish (per minute, over the last 15 minutes and the last hour), and
/// jobs finished and failed in each hour of the last day.
package struct QueueThroughput: Sendable, Equatable {
    /// Jobs of the current wave: done, failed, and all of them (nil: nothing queued or running).
    package var wave: (since: Double, done: Int, failed: Int, total: Int)?
    package var finishedLast15Minutes = 0
    package var finishedLastHour = 0
    /// The last 24 hours, oldest first: (the hour's start, done, failed).
    package var hourly: [(hour: Double, done: Int, failed: Int)] = []

    package static func == (a: QueueThroughput, b: QueueThroughput) -> Bool {
        a.wave?.since == b.wave?.since && a.wave?.done == b.wave?.done && a.wave?.failed == b.wave?.failed
            && a.wave?.total == b.wave?.total && a.finishedLast15Minutes == b.finishedLast15Minutes
            && a.finishedLastHour == b.finishedLastHour
            && a.hourly.map { [$0.hour, Double($0.done), Double($0.failed)] }
                == b.hourly.map { [$0.hour, Double($0.done), Double($0.failed)] }
    }

    /// Jobs finished per minute: over the last 15 minutes, or, when none finished in them, over
    /// the last hour; nil when none finished in the hour.
    package var perMinute: Double? {
        if finishedLast15Minutes > 0 { return Double(finishedLast15Minutes) / 15 }
        if finishedLastHour > 0 { return Double(finishedLastHour) / 60 }
        return nil
    }

    /// Seconds until `left` jobs are done at that pace; nil without a pace.
    package func secondsToFinish(_ left: Int) -> Double? {
        guard left > 0, let pace = perMinute, pace > 0 else { return nil }
        return Double(left) / pace * 60
    }
}

extension JobQueue {
    /// The queue's throughput now: a few index steps (`jobs_state_finished`, the claim index),
    /// not a scan of every job.
    func throughput() throws -> QueueThroughput {
        var throughput = QueueThroughput()
        let wave = try connection.execute(
            """
            WITH start AS (SELECT min(created_at) AS at FROM vmerge.jobs WHERE state IN ('queued', 'running'))
            SELECT extract(epoch FROM start.at),
                (SELECT count(*) FROM vmerge.jobs WHERE state = 'done' AND finished_at >= start.at),
                (SELECT count(*) FROM vmerge.jobs WHERE state = 'failed' AND finished_at >= start.at),
                (SELECT count(*) FROM vmerge.jobs WHERE state IN ('queued', 'running'))
            FROM start WHERE start.at IS NOT NULL
            """)
        if wave.rowCount == 1, let since = wave.value(0, 0).flatMap({ Double($0) }) {
            let int = { wave.value(0, $0).flatMap { Int($0) } ?? 0 }
            throughput.wave = (since, int(1), int(2), int(1).addingSaturating(int(2)).addingSaturating(int(3)))
        }
        let hours = try connection.execute(
            """
            SELECT extract(epoch FROM date_trunc('hour', finished_at)), state, count(*),
                count(*) FILTER (WHERE finished_at > now() - interval '15 minutes'),
                count(*) FILTER (WHERE finished_at > now() - interval '1 hour')
            FROM vmerge.jobs WHERE state IN ('done', 'failed') AND finished_at > now() - interval '24 hours'
            GROUP BY 1, 2
            """)
        var byHour: [Double: (done: Int, failed: Int)] = [:]
        for row in 0..<hours.rowCount {
            guard let hour = hours.value(row, 0).flatMap({ Double($0) }) else { continue }
            let count = hours.value(row, 2).flatMap { Int($0) } ?? 0
            if hours.value(row, 1) == "done" { byHour[hour, default: (0, 0)].done = count }
            throughput.finishedLast15Minutes = throughput.finishedLast15Minutes.addingSaturating(
                hours.value(row, 3).flatMap { Int($0) } ?? 0)
            throughput.finishedLastHour = throughput.finishedLastHour.addingSaturating(
                hours.value(row, 4).flatMap { Int($0) } ?? 0)
        }
        // Failures that happened, each attempt (retried or not), not jobs that are failed now.
        let failures = try connection.execute(
            """
            SELECT extract(epoch FROM date_trunc('hour', ended_at)), count(*) FROM vmerge.attempt_ends
            WHERE result = 'failed' AND ended_at > now() - interval '24 hours' GROUP BY 1
            """)
        for row in 0..<failures.rowCount {
            guard let hour = failures.value(row, 0).flatMap({ Double($0) }) else { continue }
            byHour[hour, default: (0, 0)].failed = failures.value(row, 1).flatMap { Int($0) } ?? 0
        }
        let now =
            try connection.execute("SELECT extract(epoch FROM date_trunc('hour', now()))").value(0, 0)
            .flatMap { Double($0) } ?? 0
        throughput.hourly = (0..<24).map { index in
            let hour = now - Double(23 - index) * 3600
            return (hour, byHour[hour]?.done ?? 0, byHour[hour]?.failed ?? 0)
        }
        return throughput
    }
}
