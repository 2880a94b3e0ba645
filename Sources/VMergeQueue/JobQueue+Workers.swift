import Foundation
import VMergeCore

/// What a worker said of itself (`vmerge.workers`): when it started, its last sign of life (every
/// third of its lease, busy or idle) and when it stopped cleanly.
package struct WorkerPresence: Sendable, Equatable {
    package var startedAt: Double
    package var heartbeatAt: Double
    package var stoppedAt: Double?
    package var lease: Double

    /// Whether it is alive, and so what it is doing, at `now`; `holdsJobs`: it holds a lease.
    package enum Liveness: String, Sendable, CaseIterable {
        /// Holding jobs, and heard from within its lease.
        case running
        /// Heard from within its lease, holding none: ready to claim.
        case idle
        /// Said it stopped (SIGINT/SIGTERM, `--once` done).
        case stopped
        /// Not heard from for a whole lease, without saying it stopped (killed, cut off).
        case silent
    }

    package func liveness(at now: Double, holdsJobs: Bool) -> Liveness {
        if let stoppedAt, stoppedAt >= heartbeatAt { return .stopped }
        if now - heartbeatAt > max(lease, 10) { return .silent }
        return holdsJobs ? .running : .idle
    }
}

extension JobQueue {
    /// The worker `name` starts: its row made, or made new.
    package func workerStarted(_ name: String, lease: Double) throws {
        _ = try connection.execute(
            """
            INSERT INTO vmerge.workers (name, lease_seconds) VALUES ($1, $2::double precision)
            ON CONFLICT (name) DO UPDATE SET started_at = now(), heartbeat_at = now(), stopped_at = NULL,
                lease_seconds = excluded.lease_seconds
            """, [name, "\(lease)"])
    }

    /// The worker `name` is alive; once it said it stopped, a late heartbeat (its thread ends a
    /// moment after) changes nothing.
    package func workerAlive(_ name: String) throws {
        _ = try connection.execute(
            "UPDATE vmerge.workers SET heartbeat_at = now() WHERE name = $1 AND stopped_at IS NULL", [name])
    }

    /// The worker `name` stops cleanly.
    package func workerStopped(_ name: String) throws {
        _ = try connection.execute("UPDATE vmerge.workers SET stopped_at = now() WHERE name = $1", [name])
    }

    /// Every worker heard from in the last day, as it said of itself.
    func workerPresences() throws -> [String: WorkerPresence] {
        let rows = try connection.execute(
            """
            SELECT name, extract(epoch FROM started_at), extract(epoch FROM heartbeat_at),
                extract(epoch FROM stopped_at), lease_seconds
            FROM vmerge.workers WHERE heartbeat_at > now() - interval '1 day' ORDER BY name LIMIT 1000
            """)
        var found: [String: WorkerPresence] = [:]
        for row in 0..<rows.rowCount {
            guard let name = rows.value(row, 0) else { continue }
            let time = { rows.value(row, $0).flatMap { Double($0) } }
            found[name] = WorkerPresence(
                startedAt: time(1) ?? 0, heartbeatAt: time(2) ?? 0, stoppedAt: time(3), lease: time(4) ?? 60)
        }
        return found
    }
}
