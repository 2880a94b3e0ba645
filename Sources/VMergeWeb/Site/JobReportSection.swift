import Foundation
import VMergeCore

/// What a job's last attempt did, said without JSON on its page: each input with its outcome
/// (kept, trimmed, dropped and why), the output's length and size, and the error with what to do
/// about it. Read from the report the worker stored; what is not there is left out, and every
/// value goes through `HTMLText`.
enum JobReportSection {
    static func outcomes(_ report: String) -> [String] {
        guard let object = try? JSONSerialization.jsonObject(with: Data(report.utf8)) as? [String: Any] else {
            return []
        }
        var parts: [String] = []
        if let inputs = object["inputs"] as? [[String: Any]], !inputs.isEmpty {
            let rows = inputs.prefix(500).map { input -> String in
                let path = input["path"] as? String ?? ""
                let shown = RemoteName.printable(path)
                let status = input["status"] as? String ?? ""
                let reason = input["reason"] as? String ?? ""
                return "<tr><td class=\"name\">\(HTMLText.escaped(shown, limit: 300))</td>"
                    + "<td><span class=\"outcome-\(HTMLText.escaped(status, limit: 40))\">\(HTMLText.escaped(status, limit: 40))</span></td>"
                    + "<td>\(HTMLText.escaped(reason, limit: 500))</td></tr>"
            }
            parts.append(
                "<h3>What became of each input</h3><table id=\"input-outcomes\"><tr><th>input</th><th>outcome</th>"
                    + "<th>why</th></tr>" + rows.joined() + "</table>")
        }
        if let output = object["output"] as? [String: Any], output["written"] as? Bool == true {
            let seconds = (output["duration"] as? NSNumber)?.doubleValue ?? 0
            let bytes = (output["bytes"] as? NSNumber)?.int64Value ?? 0
            parts.append(
                "<p id=\"output-made\">Made: \(DashboardPage.duration(seconds)) of video, "
                    + "\(HTMLText.escaped(ByteSize.format(bytes))).</p>")
        }
        if let files = object["outputs"] as? [[String: Any]], files.count > 1 {
            parts.append(renditions(files))
        }
        if let error = object["error"] as? [String: Any], let message = error["message"] as? String {
            parts.append(
                "<p class=\"down\" id=\"report-error\">\(HTMLText.escaped(message, limit: 1000))</p>"
                    + "<p id=\"what-to-do\">\(advice(status: object["status"] as? String))</p>")
        }
        return parts
    }

    /// A job with --rendition: each of its files (its own video first), with its shape and, once
    /// written, its length and size.
    static func renditions(_ files: [[String: Any]]) -> String {
        let rows = files.prefix(16).map { file -> String in
            let name = RemoteName.printable(file["path"] as? String ?? "")
            let rendition = file["rendition"] as? String ?? "its own video"
            let size = "\((file["width"] as? NSNumber)?.intValue ?? 0)x\((file["height"] as? NSNumber)?.intValue ?? 0)"
            var made = "not written"
            if file["written"] as? Bool == true {
                let seconds = (file["duration"] as? NSNumber)?.doubleValue ?? 0
                let bytes = (file["bytes"] as? NSNumber)?.int64Value ?? 0
                made = "\(DashboardPage.duration(seconds)), \(ByteSize.format(bytes))"
            }
            return "<tr><td class=\"name\">\(HTMLText.escaped(name, limit: 300))</td>"
                + "<td>\(HTMLText.escaped(rendition, limit: 80))</td><td>\(HTMLText.escaped(size, limit: 40))</td>"
                + "<td>\(HTMLText.escaped(made, limit: 80))</td></tr>"
        }
        return "<h3>Its files</h3><table id=\"renditions\"><tr><th>file</th><th>rendition</th><th>size</th>"
            + "<th>made</th></tr>" + rows.joined() + "</table>"
    }

    /// What to do about a job that did not end well, by its status.
    static func advice(status: String?) -> String {
        switch status {
        case "nothing_to_merge":
            return "Every input was dropped (see why above): give it longer clips, or lower --min-duration."
        case "cancelled": return "It was stopped; Retry queues it again."
        default:
            return "If the error names an input, mend or replace that file, then Retry; if it names the output's "
                + "side (space, a folder, a name taken), mend that, and the queue retries it by itself while "
                + "attempts remain."
        }
    }
}
