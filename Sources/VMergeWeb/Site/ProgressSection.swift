import Foundation
import VMergeCore
import VMergeQueue

/// The queue's progress on the front page, "when will it be done": how far the current wave of
/// jobs has got, how fast jobs finish, when the waiting ones should be done at that pace, and a
/// chart of jobs finished and failed in each hour of the last day (SVG the page draws itself: no
/// script, nothing from the network).
enum ProgressSection {
    static func html(_ snapshot: QueueSnapshot, now: Date) -> String {
        let throughput = snapshot.throughput
        var parts = ["<h2>Progress</h2>"]
        // Counts from the database may be anything a hand-written row says: added without trapping.
        let left = (snapshot.counts[.queued] ?? 0).addingSaturating(snapshot.counts[.running] ?? 0)
        if let wave = throughput.wave {
            parts.append(
                "<p id=\"wave\">\(wave.done) of \(wave.total) jobs done, \(wave.failed) failed, since "
                    + "\(relative(wave.since, now: now)); \(left) to go.</p>")
        } else {
            parts.append("<p id=\"wave\">Nothing is queued or running.</p>")
        }
        parts.append("<p id=\"pace\">" + pace(throughput, left: left, now: now) + "</p>")
        parts.append(chart(throughput.hourly))
        return parts.joined(separator: "\n")
    }

    /// "3.2 jobs a minute over the last 15 minutes (2.9 over the hour): the 27 left should be done
    /// in about 0:09:00, by 15:31 UTC."
    static func pace(_ throughput: QueueThroughput, left: Int, now: Date) -> String {
        let rate = { (count: Int, minutes: Double) in String(format: "%.1f", Double(count) / minutes) }
        guard let seconds = throughput.secondsToFinish(left) else {
            return throughput.perMinute == nil
                ? "No job finished in the last hour."
                : "\(rate(throughput.finishedLastHour, 60)) jobs a minute over the last hour."
        }
        let at = now.addingTimeInterval(seconds).timeIntervalSince1970
        return "\(rate(throughput.finishedLast15Minutes, 15)) jobs a minute over the last 15 minutes "
            + "(\(rate(throughput.finishedLastHour, 60)) over the hour): the \(left) left should be done in about "
            + "<span id=\"eta\">\(DashboardPage.duration(seconds))</span>, by \(time(at))."
    }

    /// A time as "3 min ago", its exact UTC on hover.
    static func relative(_ seconds: Double, now: Date) -> String {
        let age = now.timeIntervalSince1970 - seconds
        let words: String
        switch age {
        case ..<60: words = "just now"
        case ..<3600: words = "\(Int(age / 60)) min ago"
        case ..<86400: words = "\(Int(age / 3600)) h ago"
        default: words = "\(Int(age / 86400)) d ago"
        }
        return time(seconds, shown: words)
    }

    private static func time(_ seconds: Double, shown: String? = nil) -> String {
        let exact = DashboardPage.timestamp(seconds)
        return "<time datetime=\"\(exact)\" title=\"\(exact)\">\(shown ?? exact)</time>"
    }

    /// 24 bars, done below failed, scaled to the busiest hour; each bar's counts on hover.
    static func chart(_ hourly: [(hour: Double, done: Int, failed: Int)]) -> String {
        let (width, height, bar) = (480, 120, 20)
        let most = max(1, hourly.map { $0.done.addingSaturating($0.failed) }.max() ?? 1)
        var shapes: [String] = []
        for (index, hour) in hourly.enumerated() {
            let x = index * bar
            let doneHeight = Double(hour.done) / Double(most) * Double(height - 20)
            let failedHeight = Double(hour.failed) / Double(most) * Double(height - 20)
            let title = "<title>\(DashboardPage.timestamp(hour.hour)): \(hour.done) done, \(hour.failed) failed</title>"
            shapes.append(
                "<g>\(title)<rect class=\"done\" x=\"\(x + 2)\" y=\"\(format(Double(height) - doneHeight))\" width=\"\(bar - 4)\" "
                    + "height=\"\(format(doneHeight))\"/><rect class=\"failed\" x=\"\(x + 2)\" "
                    + "y=\"\(format(Double(height) - doneHeight - failedHeight))\" width=\"\(bar - 4)\" "
                    + "height=\"\(format(failedHeight))\"/></g>")
        }
        return "<svg id=\"hourly\" role=\"img\" aria-label=\"jobs finished and failed each hour, the last 24 hours\" "
            + "width=\"\(width)\" height=\"\(height)\" viewBox=\"0 0 \(width) \(height)\">"
            + shapes.joined()
            + "</svg><p class=\"note\">Jobs done (green) and attempts failed (red, retried or not) each hour, the last 24 hours; "
            + "the busiest hour: \(most).</p>"
    }

    private static func format(_ value: Double) -> String { String(format: "%.1f", value) }
}
