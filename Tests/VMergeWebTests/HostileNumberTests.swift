import Foundation
import TestSupport
import VMergeCore
import VMergeJobs
import XCTest

@testable import VMergeQueue
@testable import VMergeWeb

/// Every number the pages show came from a queue row or a watcher's status file, and either can
/// be written by hand: the pages' sections render whatever numbers they hold (the type's
/// extremes, negatives, zero and tiny fractions, NaN and infinities) without trapping.
final class HostileNumberTests: XCTestCase {
    private static let seeds: UInt64 = 400

    private static let integers: [Int64] = [
        .min, .min + 1, -9_000_000_000_000_000_000, -1, 0, 1, 2, 1 << 53, 9_000_000_000_000_000_000, .max - 1, .max,
    ]
    private static let reals: [Double] = [
        -.infinity, -.greatestFiniteMagnitude, -9e18, -1, -.leastNonzeroMagnitude, 0, .leastNonzeroMagnitude, 0.05,
        1, 1e9, 9.3e18, 1e300, .greatestFiniteMagnitude, .infinity, .nan,
    ]

    private struct Numbers {
        var random: SeededRandom
        mutating func int64() -> Int64 {
            random.chance(0.8) ? random.pick(HostileNumberTests.integers) : Int64(bitPattern: random.next())
        }
        mutating func int() -> Int { Int(int64()) }
        mutating func real() -> Double {
            random.chance(0.8) ? random.pick(HostileNumberTests.reals) : Double(bitPattern: random.next())
        }
        mutating func date() -> Date { Date(timeIntervalSince1970: real()) }

        mutating func progress() -> MergeProgress {
            MergeProgress(
                phase: random.pick([.probing, .encoding, .done]), item: int(), itemCount: int(), file: nil,
                doneMicros: int64(), totalMicros: int64(), elapsedSeconds: real(), outputBytes: int64())
        }
    }

    /// The front page's queue sections, a job's page, the jobs table, the metrics and the watch
    /// section over rows whose every number is hostile, for each seed.
    func testPagesRenderHostileNumbersWithoutTrapping() {
        for seed in 0..<Self.seeds {
            var numbers = Numbers(random: SeededRandom(seed: seed))
            let context = PageContext(
                now: numbers.date(), actionsEnabled: true, session: nil, returnPath: "/", notice: nil)
            var snapshot = QueueSnapshot(
                counts: [.running: numbers.int(), .queued: numbers.int()], oldestPendingAge: numbers.real(),
                lastFinished: [.done: numbers.real()],
                workers: ["w": .init(leaseUntil: numbers.real(), runningJobs: numbers.int())])
            snapshot.heartbeats = ["w": numbers.real(), "x": numbers.real()]
            snapshot.finishedByWorker = ["w": .init(done: numbers.int(), failed: numbers.int())]
            snapshot.paused = .init(since: numbers.real(), by: "op")
            snapshot.running = (0..<3).map { _ in
                QueueSnapshot.RunningJob(
                    id: numbers.int64(), name: "j", worker: "w", progress: numbers.progress(), inputs: ["/in/a.mov"],
                    inputCount: numbers.int())
            }
            let page = QueueSections.all(snapshot, context: context).joined()
            XCTAssertTrue(page.contains("<table id=\"running\">"), "seed \(seed)")
            XCTAssertFalse(QueueMetrics.text(.success(snapshot)).text.isEmpty)

            let detail = JobDetail(
                id: numbers.int64(), name: "j", state: .running, attempts: numbers.int(), maxAttempts: numbers.int(),
                worker: "w", createdAt: numbers.real(), startedAt: numbers.real(), finishedAt: numbers.real(),
                notBefore: numbers.real(), heartbeatAt: numbers.real(), error: nil, job: nil, specError: nil,
                progress: numbers.progress(), report: nil, log: [])
            XCTAssertTrue(
                JobDetailPage.parts(detail, context: context).joined().contains("id=\"progress\""), "seed \(seed)")
            let job = QueuedJob(
                id: numbers.int64(), name: "j", state: .failed, attempts: numbers.int(), maxAttempts: numbers.int(),
                worker: nil, output: nil, createdAt: nil, startedAt: nil, finishedAt: nil, notBefore: nil,
                leaseUntil: nil, error: nil)
            XCTAssertFalse(JobListSection.table([job], context: context).isEmpty)

            var status = WatchStatus(inbox: "/in", outbox: "/out")
            (status.pid, status.done, status.failed, status.inputCount) = (
                numbers.int64(), numbers.int(), numbers.int(), numbers.int()
            )
            (status.updated, status.started, status.jobStarted) = (numbers.date(), numbers.date(), numbers.date())
            status.job = "job"
            status.progress = numbers.random.chance(0.8) ? numbers.progress() : nil
            status.percent = numbers.real()
            status.record(
                .init(
                    name: "a", result: .done, finishedAt: numbers.date(), output: "a.mp4", outputBytes: numbers.int64())
            )
            let watch = WatchSection.html(
                [WatchFolderStatus(source: "s.json", reading: .status(status))], now: numbers.date())
            XCTAssertTrue(watch.contains("watch-running"), "seed \(seed)")
        }
    }
}
