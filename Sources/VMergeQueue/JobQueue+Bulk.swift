import VMergeCore

extension JobQueue {
    /// Every job in `state` (failed or cancelled) whose name holds `name` (nil: every name) queued
    /// again, its attempts counted from 0, `who` said in each one's log; in one statement, so a
    /// job that changes meanwhile is either taken as it was or not at all. The jobs retried.
    package func retryAll(
        in state: QueueState, nameContains name: String?, by who: String
    ) throws -> [(id: Int64, name: String)] {
        precondition(state == .failed || state == .cancelled, "only failed or cancelled jobs are retried")
        var parameters: [String?] = [state.rawValue]
        var conditions = ["state = $1"]
        if let name, !name.isEmpty { conditions += JobQueue.nameConditions(name, parameters: &parameters) }
        var line = JobLog(worker: who)
        line.append(
            "queued again (all \(state.rawValue) jobs\(name.map { " named like \(VisibleText.of($0))" } ?? ""))")
        parameters.append(line.lines.first)
        let rows = try connection.execute(
            """
            UPDATE vmerge.jobs SET state = 'queued', attempts = 0, not_before = now(), lease_until = NULL,
                started_at = NULL, finished_at = NULL, progress = NULL,
                log = \(JobQueue.appendLog("$\(parameters.count)"))
            WHERE \(conditions.joined(separator: " AND "))
            RETURNING id, name
            """, parameters)
        return (0..<rows.rowCount).compactMap { row in
            guard let id = rows.value(row, 0).flatMap({ Int64($0) }) else { return nil }
            return (id, rows.value(row, 1) ?? "")
        }.sorted { $0.id < $1.id }
    }

    /// The conditions that find the names holding `name` (its parameters added): through the
    /// index of the names' suffixes, and matched in full past its 32 characters.
    static func nameConditions(_ name: String, parameters: inout [String?]) -> [String] {
        parameters.append(name)
        let text = "$\(parameters.count)"
        parameters.append("%" + JobQueue.likeEscaped(name) + "%")
        return [
            "vmerge.name_parts(name) @@ vmerge.name_query(\(text))",
            "(length(lower(\(text))) <= 32 OR name ILIKE $\(parameters.count) ESCAPE '\\')",
        ]
    }
}
