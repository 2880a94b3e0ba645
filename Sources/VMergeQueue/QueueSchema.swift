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
        // A queue of 100,000 jobs read once a second by the dashboard and on every page (issue 44):
        // nothing it reads scans the table.
        // - `vmerge.job_counts`: the jobs in each state, as rows of changes that sum to them, so
        //   that counting costs a few rows however many jobs there are. Each statement that adds a
        //   job or changes its state notes the change in the transaction's own settings (no row
        //   written per job: a `queue add` of 100,000 jobs updating one row 100,000 times in one
        //   transaction would grow that row's chain of versions with every job); at commit the
        //   notes become one row per state changed, and the rows no other transaction holds are
        //   summed into one per state (skipping locked rows: two commits never wait on each other,
        //   and a long `queue add` keeps no worker from claiming). Rows changed by hand count
        //   too; TRUNCATE empties the counts.
        // - (state, finished_at): when a job last ended in each state; (not_before) of queued jobs:
        //   the one that has waited longest; (heartbeat_at): the workers heard from in the last day.
        //   The last makes a heartbeat write its row's index entries (it can no longer be a HOT
        //   update): a few entries a second per running job, against a scan of every job a second.
        // - The name filter ("name contains", any case) through a GIN index of every suffix of the
        //   lower-cased name (its first 32 characters), as a text search vector whose lexemes are
        //   taken as they are: text is in a name exactly when a suffix starts with it, a prefix
        //   query. Built in, unlike pg_trgm, and exact (the same answers as ILIKE); text longer
        //   than 32 characters is matched on its first 32 through the index, then in full.
        [
            // The count is taken before the triggers exist: no job may change state in between
            // (a worker left running), or the counts would stay wrong for good.
            "LOCK TABLE vmerge.jobs IN SHARE ROW EXCLUSIVE MODE",
            "CREATE TABLE vmerge.job_counts (state text NOT NULL, jobs bigint NOT NULL)",
            "INSERT INTO vmerge.job_counts (state, jobs) SELECT state, count(*) FROM vmerge.jobs GROUP BY state",
            """
            CREATE FUNCTION vmerge.note_job_state() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF TG_OP <> 'INSERT' THEN
                    PERFORM set_config('vmerge.jobs_' || OLD.state, (coalesce(nullif(
                        current_setting('vmerge.jobs_' || OLD.state, true), ''), '0')::bigint - 1)::text, true);
                END IF;
                IF TG_OP <> 'DELETE' THEN
                    PERFORM set_config('vmerge.jobs_' || NEW.state, (coalesce(nullif(
                        current_setting('vmerge.jobs_' || NEW.state, true), ''), '0')::bigint + 1)::text, true);
                END IF;
                PERFORM set_config('vmerge.jobs_changed', 'yes', true);
                RETURN NULL;
            END
            $$
            """,
            // Writes changes to the counts and sums what no other transaction holds. As the role
            // that made the queue (SECURITY DEFINER, its search path fixed): a role granted only
            // vmerge.jobs, as workers may be, keeps the counts right without rights of its own.
            """
            CREATE FUNCTION vmerge.add_job_counts(states text[], changes bigint[]) RETURNS void
            LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
            BEGIN
                INSERT INTO vmerge.job_counts (state, jobs) SELECT * FROM unnest(states, changes);
                WITH summed AS (
                    DELETE FROM vmerge.job_counts WHERE ctid = ANY (ARRAY(
                        SELECT ctid FROM vmerge.job_counts FOR UPDATE SKIP LOCKED))
                    RETURNING job_counts.state, job_counts.jobs
                )
                INSERT INTO vmerge.job_counts (state, jobs)
                SELECT summed.state, sum(summed.jobs) FROM summed GROUP BY summed.state HAVING sum(summed.jobs) <> 0;
            END
            $$
            """,
            // Runs once per changed row at commit (a constraint trigger is deferred per row); the
            // first takes the notes, the others find none. (The notes are read and cleared here,
            // not in the function above: a function with its own settings undoes those made in it.)
            """
            CREATE FUNCTION vmerge.count_job_states() RETURNS trigger LANGUAGE plpgsql AS $$
            DECLARE
                each_state text;
                change bigint;
                states text[] := '{}';
                changes bigint[] := '{}';
            BEGIN
                IF coalesce(current_setting('vmerge.jobs_changed', true), '') <> 'yes' THEN
                    RETURN NULL;
                END IF;
                PERFORM set_config('vmerge.jobs_changed', '', true);
                FOREACH each_state IN ARRAY ARRAY['queued', 'running', 'done', 'failed', 'cancelled'] LOOP
                    change := coalesce(nullif(current_setting('vmerge.jobs_' || each_state, true), ''), '0')::bigint;
                    IF change <> 0 THEN
                        states := states || each_state;
                        changes := changes || change;
                        PERFORM set_config('vmerge.jobs_' || each_state, '0', true);
                    END IF;
                END LOOP;
                IF cardinality(states) > 0 THEN
                    PERFORM vmerge.add_job_counts(states, changes);
                END IF;
                RETURN NULL;
            END
            $$
            """,
            """
            CREATE FUNCTION vmerge.forget_job_counts() RETURNS trigger
            LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
            BEGIN
                DELETE FROM vmerge.job_counts;
                RETURN NULL;
            END
            $$
            """,
            """
            CREATE TRIGGER jobs_note_added AFTER INSERT ON vmerge.jobs
            FOR EACH ROW EXECUTE FUNCTION vmerge.note_job_state()
            """,
            """
            CREATE TRIGGER jobs_note_state AFTER UPDATE OF state ON vmerge.jobs
            FOR EACH ROW WHEN (OLD.state IS DISTINCT FROM NEW.state) EXECUTE FUNCTION vmerge.note_job_state()
            """,
            """
            CREATE TRIGGER jobs_note_removed AFTER DELETE ON vmerge.jobs
            FOR EACH ROW EXECUTE FUNCTION vmerge.note_job_state()
            """,
            """
            CREATE CONSTRAINT TRIGGER jobs_count_added AFTER INSERT ON vmerge.jobs
            DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION vmerge.count_job_states()
            """,
            """
            CREATE CONSTRAINT TRIGGER jobs_count_state AFTER UPDATE OF state ON vmerge.jobs
            DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (OLD.state IS DISTINCT FROM NEW.state)
            EXECUTE FUNCTION vmerge.count_job_states()
            """,
            """
            CREATE CONSTRAINT TRIGGER jobs_count_removed AFTER DELETE ON vmerge.jobs
            DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION vmerge.count_job_states()
            """,
            """
            CREATE TRIGGER jobs_count_truncated AFTER TRUNCATE ON vmerge.jobs
            FOR EACH STATEMENT EXECUTE FUNCTION vmerge.forget_job_counts()
            """,
            "CREATE INDEX jobs_state_finished ON vmerge.jobs (state, finished_at)",
            "CREATE INDEX jobs_waiting ON vmerge.jobs (not_before) WHERE state = 'queued'",
            "CREATE INDEX jobs_heartbeat ON vmerge.jobs (heartbeat_at)",
            // Schema-qualified throughout: an index's function is also run where the search path
            // is empty (pg_dump's restore).
            """
            CREATE FUNCTION vmerge.name_parts(name text) RETURNS tsvector
            LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
                SELECT pg_catalog.array_to_tsvector(ARRAY(
                    SELECT DISTINCT pg_catalog.left(pg_catalog.substr(pg_catalog.lower(name), i), 32)
                    FROM pg_catalog.generate_series(1, pg_catalog.length(pg_catalog.lower(name))) AS i))
            $$
            """,
            // The query that finds the names holding `text` (its first 32 characters): a prefix
            // query of one lexeme, quoted as tsquery's input wants (\ and '' inside quotes).
            """
            CREATE FUNCTION vmerge.name_query(text text) RETURNS tsquery
            LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
                SELECT ('''' || pg_catalog.replace(pg_catalog.replace(pg_catalog.left(pg_catalog.lower(text), 32),
                    '\\', '\\\\'), '''', '''''') || ''':*')::pg_catalog.tsquery
            $$
            """,
            "CREATE INDEX jobs_name_parts ON vmerge.jobs USING gin (vmerge.name_parts(name))",
        ],
        // A function is executable by PUBLIC when made, and add_job_counts runs as the queue's
        // owner: any role that may use the schema (a read-only dashboard's) could write any count
        // through it. Only the owner and the roles given a worker's grants (`queue grants`) may.
        // (The trigger functions cannot be called but as triggers; name_parts and name_query
        // only compute.)
        ["REVOKE EXECUTE ON FUNCTION vmerge.add_job_counts(text[], bigint[]) FROM PUBLIC"],
        // The job API's Idempotency-Key (issue 48): each caller's (an API token's name) keys, the
        // job each one made and a digest of the request, so a repeat within 24 hours answers the
        // first job and a key reused for another request is refused. No foreign key: the jobs
        // table may be truncated (its trigger forgets the counts); a key whose job is gone
        // answers nothing, and is taken anew.
        [
            """
            CREATE TABLE vmerge.idempotency_keys (
                caller text NOT NULL,
                key text NOT NULL,
                job_id bigint NOT NULL,
                request_digest text NOT NULL,
                created_at timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (caller, key)
            )
            """,
            "CREATE INDEX idempotency_keys_job ON vmerge.idempotency_keys (job_id)",
        ],
        // The events' outbox (issue 48): each event a worker owes a receiver, written in the
        // same transaction as the job's state it tells of, so a worker killed after recording a
        // job still has its event delivered (by any worker with the secret). `event_id` is the
        // webhook-id, the same on every try (receivers drop repeats by it). Undelivered rows are
        // found through the partial index; delivered ones are kept a while for the page.
        [
            """
            CREATE TABLE vmerge.events (
                id bigserial PRIMARY KEY,
                job_id bigint NOT NULL,
                url text NOT NULL,
                event_id text NOT NULL,
                type text NOT NULL,
                payload text NOT NULL,
                attempts integer NOT NULL DEFAULT 0,
                next_attempt_at timestamptz NOT NULL DEFAULT now(),
                created_at timestamptz NOT NULL DEFAULT now(),
                delivered_at timestamptz,
                given_up_at timestamptz,
                last_error text
            )
            """,
            """
            CREATE INDEX events_due ON vmerge.events (next_attempt_at)
            WHERE delivered_at IS NULL AND given_up_at IS NULL
            """,
        ],
        // Workers say when they start, that they are alive (every third of their lease, busy or
        // idle) and when they stop cleanly: the page and the metrics tell running, idle, stopped
        // and silent workers apart, and see queued jobs that no live worker can take.
        [
            """
            CREATE TABLE vmerge.workers (
                name text PRIMARY KEY,
                started_at timestamptz NOT NULL DEFAULT now(),
                heartbeat_at timestamptz NOT NULL DEFAULT now(),
                stopped_at timestamptz,
                lease_seconds double precision NOT NULL
            )
            """
        ],
        // Each attempt's end (done, or failed: retried or for good), by worker, written with the
        // job's change: "failed, 24 h" and the hourly chart count failures that happened, not the
        // jobs that are failed now (a job retried since is no longer failed; a failed attempt that
        // was retried never was). Kept two days. Filled, once, from the jobs ended in the last day.
        [
            """
            CREATE TABLE vmerge.attempt_ends (
                worker text NOT NULL,
                ended_at timestamptz NOT NULL DEFAULT now(),
                result text NOT NULL CHECK (result IN ('done', 'failed'))
            )
            """,
            "CREATE INDEX attempt_ends_at ON vmerge.attempt_ends (ended_at)",
            """
            INSERT INTO vmerge.attempt_ends (worker, ended_at, result)
            SELECT worker, finished_at, state FROM vmerge.jobs
            WHERE state IN ('done', 'failed') AND worker IS NOT NULL AND finished_at > now() - interval '1 day'
            """,
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
