import Foundation
import VMergeCore
import VMergeQueue
import VMergeRemote

/// A job's own page (`/jobs/ID`): its state and times, its error, its action, its progress, its
/// inputs, output and the options it sets, its poster as a thumbnail, the last attempt's report
/// and what the workers said about it. Every value from outside goes through `HTMLText`.
enum JobDetailPage {
    static func parts(_ detail: JobDetail, context: PageContext) -> [String] {
        var parts = [
            "<h2 id=\"job-heading\">Job \(detail.id): \(HTMLText.escaped(detail.name))</h2>",
            facts(detail, context: context),
        ]
        if let progress = detail.progress {
            let cells = QueueSections.progressCells(progress)
            parts.append(
                "<table id=\"progress\"><tr><th>clip</th><th>done</th><th>speed</th><th>elapsed</th><th>time left</th>"
                    + "<th>written / expected</th></tr><tr>" + cells.map { "<td>\($0)</td>" }.joined() + "</tr></table>"
            )
        }
        if let job = detail.job {
            parts += what(job)
            if detail.state == .done, job.settings.merge.posterPath(forOutput: job.output.escaped) != nil {
                parts.append(
                    "<h3>Poster</h3><img class=\"poster\" id=\"poster\" src=\"/jobs/\(detail.id)/poster\" alt=\"the poster\">"
                )
            }
        } else if let problem = detail.specError {
            parts.append("<p class=\"down\">Its job cannot be read: \(HTMLText.escaped(problem))</p>")
        }
        if let report = detail.report {
            parts += JobReportSection.outcomes(report)
            // Escaped a line at a time: the escape would show the line breaks a <pre> needs as "\n".
            let lines = pretty(report).components(separatedBy: "\n").map(HTMLText.escaped).joined(separator: "\n")
            parts.append(
                "<details id=\"report-details\"><summary>The last attempt's whole report (JSON)</summary>"
                    + "<pre id=\"report\">\(lines)</pre></details>")
        }
        if !detail.log.isEmpty {
            let lines = detail.log.map(HTMLText.escaped).joined(separator: "\n")
            parts.append("<h3>What the workers said</h3><pre id=\"log\">\(lines)</pre>")
        }
        return parts
    }

    private static func facts(_ detail: JobDetail, context: PageContext) -> String {
        let time = { (seconds: Double?) in seconds.map(DashboardPage.timestamp) ?? "" }
        let rows: [(String, String)] = [
            (
                "state",
                "<span class=\"state-\(detail.state.rawValue)\" id=\"job-state\">\(detail.state.rawValue)</span> "
                    + JobListSection.action(for: detail.state, id: detail.id, context: context)
            ),
            ("attempts", "\(detail.attempts) of \(detail.maxAttempts)"),
            ("worker", HTMLText.escaped(detail.worker ?? "")), ("added", time(detail.createdAt)),
            ("started", time(detail.startedAt)), ("finished", time(detail.finishedAt)),
            ("waits until", detail.state == .queued ? time(detail.notBefore) : ""),
            ("last heartbeat", time(detail.heartbeatAt)), ("error", HTMLText.escaped(detail.error ?? "")),
        ]
        return "<table id=\"facts\">"
            + rows.filter { !$0.1.isEmpty }.map { "<tr><th>\($0.0)</th><td>\($0.1)</td></tr>" }.joined() + "</table>"
    }

    /// The inputs (with their trims and titles as the job has them), the output, and the options
    /// that differ from vmerge's defaults.
    private static func what(_ job: Job) -> [String] {
        let inputs = job.inputs.map { input in
            let edit =
                input.edit == .whole ? "" : " <small>(\(HTMLText.escaped(String(describing: input.edit))))</small>"
            // A presigned URL's query is a secret: shown as `?…` (the spec keeps it for the worker).
            let shown =
                RemoteName.printable(input.path.escaped)
            return "<li>\(HTMLText.escaped(shown))\(edit)</li>"
        }.joined()
        let defaults = JobSettings()
        let options = JobOption.all.compactMap { option -> String? in
            let value = option.value(in: job.settings)
            guard value != option.value(in: defaults) else { return nil }
            return "<tr><th>\(HTMLText.escaped(option.name))</th><td>\(HTMLText.escaped(value))</td></tr>"
        }
        return [
            "<h3>Inputs</h3><ol id=\"inputs\">\(inputs)</ol>",
            "<h3>Output</h3><p id=\"output\">\(HTMLText.escaped(job.output.escaped))</p>",
            options.isEmpty
                ? "<p>vmerge's default options.</p>"
                : "<h3>Options</h3><table id=\"options\">" + options.joined() + "</table>",
        ]
    }

    /// JSON text indented for reading (as it came, when it is not JSON).
    static func pretty(_ text: String) -> String {
        guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)),
            let data = try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
        else { return text }
        // JSONSerialization writes "/" as "\/": the same string in JSON, harder to read.
        return String(decoding: data, as: UTF8.self).replacingOccurrences(of: "\\/", with: "/")
    }

    /// The poster of a done job, as the page's thumbnail: only the file the job's own options
    /// name beside its output, and only when the worker's report says it wrote that file; read
    /// without following a link in any of its folders or its name, at most 4 MiB, and served only
    /// if it is a JPEG. A job added with an output anywhere cannot make the dashboard serve any
    /// other file. A poster beside an object is read from its bucket, with the dashboard's own
    /// credentials (an https name is never fetched).
    static func poster(_ detail: JobDetail) -> HTTPResponse {
        guard detail.state == .done, let job = detail.job,
            let path = job.settings.merge.posterPath(forOutput: job.output.escaped),
            let report = detail.report, reportNames(report, poster: path)
        else { return .notFound() }
        let limit = 4 << 20
        let bytes: Data?
        if RemoteName.looksRemote(path) {
            guard case let .s3(address)? = RemoteName(path) else { return .notFound() }
            bytes = RemoteConnector().smallObject(at: address, limit: limit)
        } else {
            bytes = (try? SafeFile.openForReadingWithoutLinks(path)).flatMap {
                try? SafeFile.read($0, name: path, limit: limit)
            }
        }
        guard let data = bytes, data.starts(with: [0xFF, 0xD8, 0xFF]) else { return .notFound() }
        return HTTPResponse(
            status: 200, headers: [("Content-Type", "image/jpeg"), ("Cache-Control", "no-store")], body: Array(data))
    }

    /// Whether the report's output names `poster` as the poster it wrote.
    private static func reportNames(_ report: String, poster: String) -> Bool {
        guard let object = try? JSONSerialization.jsonObject(with: Data(report.utf8)) as? [String: Any],
            let output = object["output"] as? [String: Any], let written = output["poster"] as? String
        else { return false }
        return written == poster
    }
}
