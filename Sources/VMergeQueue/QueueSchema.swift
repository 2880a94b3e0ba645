import VMergeCore

/// The queue's tables, in their own PostgreSQL schema `vmerge` (a database shared with other
/// applications keeps its names), and the migrations that make them: migration n brings the
/// schema from version n-1 to n, and `vmerge.schema_version` records each one applied.
package enum QueueSchema {
    /// The version this vmerge reads and writes.
    package static var version: Int { migrations.count }

    /// Each migration's statements, in order (one statement each: PQexecParams takes one).
    static let migrations: [[String]] = [
        [
            """
            CREATE TABLE vmerge.jobs (
                id bigserial PRIMARY KEY,
                job_key text NOT NULL UNIQUE,
                name text NOT NULL,
                spec jsonb NOT NULL,
                state text NOT NULL DEFAULT 'queued'
                    CHECK (state IN ('queued', 'running', 'done', 'failed', 'cancelled')),
                attempts integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
                max_attempts integer NOT NULL DEFAULT 3 CHECK (max_attempts >= 1),
                -- Claims ever made (retry resets attempts, not this): with worker, the proof of a lease.
                claims integer NOT NULL DEFAULT 0,
                worker text,
                lease_until timestamptz,
                not_before timestamptz NOT NULL DEFAULT now(),
                created_at timestamptz NOT NULL DEFAULT now(),
                started_at timestamptz,
                finished_at timestamptz,
                last_error text
            )
            """,
            // The claim takes the lowest id that is queued (or running with its lease run out):
            // only those rows are indexed, so finished jobs cost the claim nothing.
            "CREATE INDEX jobs_claim ON vmerge.jobs (id) WHERE state IN ('queued', 'running')",
        ],
        // What a dashboard shows of a running job: when its worker last claimed or renewed it,
        // and how far its merge has got (the worker's latest `--progress json` line). No index:
        // a column written every second would make every write an index write too.
        [
            "ALTER TABLE vmerge.jobs ADD COLUMN heartbeat_at timestamptz",
            "ALTER TABLE vmerge.jobs ADD COLUMN progress jsonb",
        ],
        // What an operator steers and reads back (issue 35's actions and job pages):
        // - `vmerge.control`, one row: whether the queue is paused, since when and by whom. A row,
        //   not a flag in each job, so that pausing is one write and queued jobs stay as they are.
        // - each job's report (the JSON `vmerge --report` writes) and its worker's log lines
        //   about it, written when an attempt ends.
        // - (state, id): the job pages list one state newest first, and count it.
        [
            """
            CREATE TABLE vmerge.control (
                singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
                paused_at timestamptz,
                paused_by text
            )
            """,
            "INSERT INTO vmerge.control DEFAULT VALUES",
            "ALTER TABLE vmerge.jobs ADD COLUMN report jsonb",
            "ALTER TABLE vmerge.jobs ADD COLUMN log text",
            "CREATE INDEX jobs_state_id ON vmerge.jobs (state, id)",
        ],
    ]

    /// Held while migrating, so two `queue init` at once take turns (the second finds it done).
    static let migrationLock = "130212225509221"  // "vmerge" as a number

    /// What `migrate` found and left.
    package struct Migration: Sendable, Equatable {
        package var from: Int
        package var to: Int
    }

    /// Creates the schema or brings it up to `version` (tests stop at an older `target`, to
    /// migrate a queue of that version); run again, it changes nothing.
    @discardableResult
    package static func migrate(_ connection: PGConnection, upTo target: Int = version) throws -> Migration {
        try connection.transaction {
            try connection.execute("SELECT pg_advisory_xact_lock($1::bigint)", [migrationLock])
            try connection.execute("CREATE SCHEMA IF NOT EXISTS vmerge")
            try connection.execute(
                """
                CREATE TABLE IF NOT EXISTS vmerge.schema_version (
                    version integer PRIMARY KEY,
                    applied_at timestamptz NOT NULL DEFAULT now()
                )
                """)
            let found = try currentVersion(connection)
            if found > version {
                throw VMergeError.database(target: connection.target, message: newer(found))
            }
            for next in stride(from: found + 1, through: min(target, version), by: 1) {
                for statement in migrations[next - 1] { try connection.execute(statement) }
                try connection.execute("INSERT INTO vmerge.schema_version (version) VALUES ($1::integer)", ["\(next)"])
            }
            return Migration(from: found, to: max(found, min(target, version)))
        }
    }

    /// Refuses a database without the queue, or with another version of it.
    package static func check(_ connection: PGConnection) throws {
        let table = try connection.execute("SELECT to_regclass('vmerge.schema_version') IS NOT NULL")
        let found = table.value(0, 0) == "t" ? try currentVersion(connection) : 0
        let problem: String
        switch found {
        case version: return
        case 0: problem = "no job queue in this database: create it with 'vmerge queue init'"
        case ..<version:
            problem = "the job queue is at schema version \(found); 'vmerge queue init' migrates it to \(version)"
        default: problem = newer(found)
        }
        throw VMergeError.database(target: connection.target, message: problem)
    }

    private static func currentVersion(_ connection: PGConnection) throws -> Int {
        let result = try connection.execute("SELECT coalesce(max(version), 0) FROM vmerge.schema_version")
        return result.value(0, 0).flatMap { Int($0) } ?? 0
    }

    private static func newer(_ found: Int) -> String {
        "the job queue is at schema version \(found), newer than this vmerge knows (\(version)): use a newer vmerge"
    }
}
