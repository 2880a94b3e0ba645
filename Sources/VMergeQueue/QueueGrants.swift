/// What a role other than the queue's owner needs on the queue (`vmerge queue grants`), as SQL for
/// the owner to run: a worker reads and changes jobs, a dashboard without actions only reads.
/// Nothing more: a worker cannot add jobs or rewrite what a job is (its spec, its key), and a
/// reader can change nothing, the job counts included (migration 5 takes the counting function
/// from PUBLIC).
package enum QueueGrants {
    /// Who the role is to the queue.
    package enum Use: String, Sendable, CaseIterable {
        /// `vmerge worker`: claims, heartbeats, records.
        case worker
        /// `vmerge dashboard` without `--token-file`: the page, the job pages, /metrics.
        case reader
    }

    /// The columns a worker's statements set (JobQueue+Claims.swift). Not `id`, `job_key`,
    /// `name`, `spec`, `max_attempts`, `created_at`: what the adder decided stays as added.
    static let workerColumns = [
        "state", "worker", "attempts", "claims", "lease_until", "not_before", "started_at", "finished_at",
        "last_error", "heartbeat_at", "progress", "report", "log",
    ]

    /// The statements granting `use` to `role` (a role name as PostgreSQL spells it, checked and
    /// quoted here), in one transaction, with comments saying for what.
    package static func sql(for use: Use, role: String) throws(RoleNameRefusal) -> String {
        let role = try quoted(role: role)
        let header = """
            -- What \(use == .worker ? "a vmerge worker" : "a read-only vmerge dashboard") needs on the queue \
            (schema version \(QueueSchema.version)).
            -- Run as the queue's owner (the role that ran 'vmerge queue init'), and again after it migrates.

            """
        var statements = [
            "GRANT USAGE ON SCHEMA vmerge TO \(role);",
            "GRANT SELECT ON vmerge.schema_version, vmerge.control, vmerge.job_counts, vmerge.jobs, vmerge.events, "
                + "vmerge.workers, vmerge.attempt_ends TO \(role);",
        ]
        switch use {
        case .worker:
            statements += [
                "GRANT UPDATE (\(workerColumns.joined(separator: ", "))) ON vmerge.jobs TO \(role);",
                // Its jobs' events: written with their states, then delivered and marked.
                "GRANT INSERT, UPDATE, DELETE ON vmerge.events TO \(role);",
                // It says when it starts, that it is alive, and when it stops.
                "GRANT INSERT, UPDATE ON vmerge.workers TO \(role);",
                // Each attempt's end, written with the job's; pruned after two days.
                "GRANT INSERT, DELETE ON vmerge.attempt_ends TO \(role);",
                "GRANT USAGE ON SEQUENCE vmerge.events_id_seq TO \(role);",
                // Its state changes are counted at commit by a function that runs as the owner.
                "GRANT EXECUTE ON FUNCTION vmerge.add_job_counts(text[], bigint[]) TO \(role);",
            ]
        case .reader:
            statements += [
                // The name filter's functions (PUBLIC's too, unless taken from it).
                "GRANT EXECUTE ON FUNCTION vmerge.name_parts(text), vmerge.name_query(text) TO \(role);"
            ]
        }
        return header + (["BEGIN;"] + statements + ["COMMIT;"]).joined(separator: "\n") + "\n"
    }

    /// The longest name PostgreSQL keeps (NAMEDATALEN - 1 bytes): a longer one is cut short
    /// without an error, and would name another role.
    static let maxRoleBytes = 63

    /// Why a role name is refused.
    package struct RoleNameRefusal: Error, Equatable, CustomStringConvertible {
        package var description: String
    }

    /// `name` as a quoted identifier ("" for "), so that any name is one name, never SQL; refused:
    /// what PostgreSQL would read as another role, or as every role.
    package static func quoted(role name: String) throws(RoleNameRefusal) -> String {
        let refuse = { (why: String) in RoleNameRefusal(description: why) }
        if name.isEmpty { throw refuse("a role name cannot be empty") }
        if name.utf8.count > maxRoleBytes {
            throw refuse("a role name has at most \(maxRoleBytes) bytes (PostgreSQL would cut it to another name)")
        }
        if name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            throw refuse("a role name cannot hold control characters")
        }
        // GRANT ... TO "public" grants to every role, quoted or not.
        if name.lowercased() == "public" { throw refuse("PostgreSQL reads 'public' as every role") }
        if name.lowercased() == "none" { throw refuse("'none' is a name PostgreSQL keeps for itself") }
        if name.lowercased().hasPrefix("pg_") {
            throw refuse("names starting with pg_ are PostgreSQL's own roles")
        }
        return "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
