import Foundation
import VMergeCore
import XCTest

@testable import VMergeQueue

/// The job pages: a filter by state and by name, newest first, paged by id.
final class JobPageTests: ServerTestCase {
    private var queue: JobQueue!
    private var sql: PGConnection!

    override func setUpWithError() throws {
        try super.setUpWithError()
        sql = try PGConnection(database)
        try QueueSchema.migrate(sql)
        queue = JobQueue(connection: sql)
    }

    /// Adds jobs named `names`, ids in order from the next; by id, the states go round queued,
    /// running, done, failed, cancelled (id 1 queued, 3 done, 8 done...).
    private func add(_ names: [String]) throws {
        try sql.execute(
            """
            INSERT INTO vmerge.jobs (job_key, name, spec)
            SELECT 'k' || names[n], names[n], '{}'
            FROM (SELECT $1::text[] AS names) AS given, generate_series(1, cardinality(names)) AS n ORDER BY n
            """,
            [
                "{" + names.map { "\"" + $0.replacingOccurrences(of: "\\", with: "\\\\") + "\"" }.joined(separator: ",")
                    + "}"
            ])
        try sql.execute(
            "UPDATE vmerge.jobs SET state = (ARRAY['queued', 'running', 'done', 'failed', 'cancelled'])[1 + (id - 1) % 5]"
        )
    }

    /// Every page of `filter`, `limit` at a time: the ids of each, and the totals they said.
    private func pages(_ filter: JobFilter, limit: Int) throws -> (ids: [[Int64]], totals: Set<Int>) {
        var ids: [[Int64]] = [], totals: Set<Int> = [], before: Int64?
        repeat {
            let page = try queue.page(filter, before: before, limit: limit)
            ids.append(page.jobs.map(\.id))
            totals.insert(page.total)
            before = page.nextBefore
        } while before != nil && ids.count < 100
        return (ids, totals)
    }

    func testPagesGoNewestFirstByKeys() throws {
        try add((1...23).map { "job \($0)" })
        let all = try pages(JobFilter(), limit: 10)
        XCTAssertEqual(all.ids, [Array((14...23).reversed()), Array((4...13).reversed()), [3, 2, 1]])
        XCTAssertEqual(all.totals, [23])
        let first = try queue.page(JobFilter(), before: nil, limit: 10)
        XCTAssertEqual(first.nextBefore, 14)
        XCTAssertEqual(first.jobs.first?.name, "job 23")
        XCTAssertEqual(first.jobs.first?.state, .done)
        // Jobs added meanwhile shift nothing on the pages after the first.
        try add((24...30).map { "late \($0)" })
        XCTAssertEqual(try queue.page(JobFilter(), before: 14, limit: 10).jobs.map(\.id), Array((4...13).reversed()))

        let done = try pages(JobFilter(state: .done), limit: 2)
        XCTAssertEqual(done.ids, [[28, 23], [18, 13], [8, 3]])
        XCTAssertEqual(done.totals, [6])
        // An exact fit leaves no next page.
        let last = try queue.page(JobFilter(state: .done), before: 14, limit: 3)
        XCTAssertEqual(last.jobs.map(\.id), [13, 8, 3])
        XCTAssertNil(last.nextBefore)
        let none = try queue.page(JobFilter(state: .failed, nameContains: "nothing"), before: nil, limit: 5)
        XCTAssertEqual(none, JobPage(jobs: [], total: 0, nextBefore: nil))
        XCTAssertEqual(try queue.page(JobFilter(), before: nil, limit: 0).jobs.count, 1, "a page lists one at least")
        XCTAssertEqual(try queue.page(JobFilter(), before: nil, limit: 100_000).jobs.count, 30)
    }

    /// The user's text is matched as it is, in any case: %, _ and \ are not LIKE's wildcards, and
    /// a quote is only a quote.
    func testANameFilterIsLiteralTextInAnyCase() throws {
        let names = [
            "100% done", "100 done", "a_b", "axb", #"back\slash"#, "backslash", "O'Brien's trip", "Trip to Rome",
            "TRIP home", "%", "_", #"\"#,
        ]
        try add(names)
        let matches = { (text: String) in
            try self.queue.page(JobFilter(nameContains: text), before: nil, limit: 50).jobs.map(\.name).sorted()
        }
        XCTAssertEqual(try matches("%"), ["%", "100% done"])
        XCTAssertEqual(try matches("0% d"), ["100% done"])
        XCTAssertEqual(try matches("_"), ["_", "a_b"])
        XCTAssertEqual(try matches("a_b"), ["a_b"])
        XCTAssertEqual(try matches(#"\"#), [#"\"#, #"back\slash"#])
        XCTAssertEqual(try matches(#"k\s"#), [#"back\slash"#])
        XCTAssertEqual(try matches("trip"), ["O'Brien's trip", "TRIP home", "Trip to Rome"])
        XCTAssertEqual(try matches("'s t"), ["O'Brien's trip"])
        XCTAssertEqual(try matches("%_\\"), [])
        XCTAssertEqual(try matches(""), names.sorted(), "no text: every name")
        let both = try queue.page(JobFilter(state: .queued, nameContains: "TRIP"), before: nil, limit: 50)
        XCTAssertEqual(both.jobs.map(\.name), [], "O'Brien's trip is running (7), Trip to Rome done, TRIP home failed")
        XCTAssertEqual(
            try queue.page(JobFilter(state: .running, nameContains: "TRIP"), before: nil, limit: 50).total, 1)
    }
}

/// 100,000 jobs, as a queue that has run a while holds them: the state-filtered pages are read
/// through the (state, id) index, however deep; nothing a dashboard reads reads every job. The timings are printed (for the record), not
/// asserted.
final class JobPageScaleTests: ServerTestCase {
    func testAStateFilteredPageUsesTheIndexAt100000Jobs() throws {
        let sql = try PGConnection(database)
        try QueueSchema.migrate(sql)
        try insertJobs(100_000, into: sql)
        let queue = JobQueue(connection: sql)
        XCTAssertEqual(try queue.counts(), [.queued: 100, .running: 4, .done: 95_901, .failed: 1997, .cancelled: 1998])

        // Failed jobs, 2% of all, spread over the ids: walking the ids newest first would read
        // fifty jobs for each one listed.
        for before in [nil, 50_000] as [Int64?] {
            let (statement, parameters) = JobQueue.pageStatement(JobFilter(state: .failed), before: before, limit: 50)
            let plan = try sql.execute("EXPLAIN " + statement, parameters)
            let text = (0..<plan.rowCount).compactMap { plan.value($0, 0) }.joined(separator: "\n")
            XCTAssertTrue(text.contains("Index Scan Backward using jobs_state_id on jobs"), text)
            // (job_counts, a few rows, is read whole.)
            XCTAssertFalse(text.contains("Seq Scan on jobs"), text)
        }

        try assertReadsNoJobWhole(sql)

        var figures: [String] = []
        for (label, filter, before) in [
            ("page 1", JobFilter(), nil), ("deep page", JobFilter(), 2_000),
            ("page 1, failed", JobFilter(state: .failed), nil), ("deep page, failed", JobFilter(state: .failed), 2_000),
            ("page 1, done", JobFilter(state: .done), nil), ("deep page, done", JobFilter(state: .done), 2_000),
            ("page 1, name", JobFilter(nameContains: "JOB 4"), nil),
            ("deep page, name", JobFilter(nameContains: "job 4"), 2_000),
            ("page 1, rare name", JobFilter(nameContains: "job 99999"), nil),
            ("page 1, failed and name", JobFilter(state: .failed, nameContains: "job 4"), nil),
        ] as [(String, JobFilter, Int64?)] {
            _ = try queue.page(filter, before: before, limit: 50)  // warm
            let clock = Stopwatch()
            let runs = 5
            var page: JobPage?
            for _ in 0..<runs { page = try queue.page(filter, before: before, limit: 50) }
            let each = clock.seconds / Double(runs) * 1000
            figures.append(
                String(format: "%@: %.1f ms (%d listed of %d)", label, each, page?.jobs.count ?? 0, page?.total ?? 0))
        }
        print("job pages over 100,000 jobs, 50 a page:\n  " + figures.joined(separator: "\n  "))
    }
}

extension JobPageScaleTests {
    /// What a dashboard reads goes through an index or the counts, never through every job (as
    /// planned at 100,000 jobs): the snapshot's statements, read once a second, and the pages,
    /// with and without a name (short or long text, alone or with a state) and deep.
    func assertReadsNoJobWhole(_ sql: PGConnection) throws {
        func plan(_ statement: String, _ parameters: [String?] = []) throws -> String {
            let plan = try sql.execute("EXPLAIN " + statement, parameters)
            return (0..<plan.rowCount).compactMap { plan.value($0, 0) }.joined(separator: "\n")
        }
        for statement in SnapshotStatement.all {
            let text = try plan(statement)
            XCTAssertFalse(text.contains("Seq Scan on jobs"), text)
        }
        XCTAssertTrue(try plan(SnapshotStatement.counts).contains("on job_counts"))
        XCTAssertTrue(try plan(SnapshotStatement.lastFinished).contains("using jobs_state_finished"))
        XCTAssertTrue(try plan(SnapshotStatement.waiting).contains("using jobs_waiting"))
        XCTAssertTrue(try plan(SnapshotStatement.heartbeats).contains("using jobs_heartbeat"))
        let long = String(repeating: "job 1", count: 8)  // past the index's 32 characters
        for filter in [
            JobFilter(), JobFilter(state: .done), JobFilter(nameContains: "JOB 4"),
            JobFilter(nameContains: "job 99999"), JobFilter(state: .failed, nameContains: "job 4"),
            JobFilter(nameContains: long),
        ] {
            for before in [nil, 50_000] as [Int64?] {
                let (statement, parameters) = JobQueue.pageStatement(filter, before: before, limit: 50)
                let text = try plan(statement, parameters)
                XCTAssertFalse(text.contains("Seq Scan on jobs"), text)
                if filter.nameContains == nil {
                    XCTAssertTrue(text.contains("on job_counts"), "counted without the jobs: \(text)")
                } else {
                    XCTAssertTrue(text.contains("on jobs_name_parts"), text)
                }
            }
        }
    }
}

/// Adds `count` jobs straight into the table in one statement (`queue add` would take minutes),
/// as a queue that has run a while holds them: names "job <n>"; the newest 100 queued and the 4
/// before them running; of the rest 2% failed and 2% cancelled, spread over the ids, and the others
/// done. Then ANALYZE, so the planner knows.
func insertJobs(_ count: Int, into sql: PGConnection) throws {
    try sql.execute(
        """
        INSERT INTO vmerge.jobs (job_key, name, spec, state, worker, created_at, started_at, finished_at)
        SELECT 'k' || n, 'job ' || n,
            jsonb_build_object('name', 'job ' || n, 'inputs', jsonb_build_array('/in/' || n || '.mov'),
                'output', '/out/' || n || '.mp4'),
            CASE WHEN n > $1::integer - 100 THEN 'queued' WHEN n > $1::integer - 104 THEN 'running'
                WHEN n % 50 = 0 THEN 'failed' WHEN n % 50 = 1 THEN 'cancelled' ELSE 'done' END,
            'w' || n % 4, now() - make_interval(secs => $1::integer - n), now(), now()
        FROM generate_series(1, $1::integer) AS n ORDER BY n
        """, ["\(count)"])
    try sql.execute("ANALYZE vmerge.jobs")
}
