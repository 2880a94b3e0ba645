import Foundation
internal import VMergeAV
internal import VMergeCore
internal import VMergeJobs

/// Runs one ``MergeJob``, as `AVAssetExportSession` runs an export: start it with ``run()``,
/// follow it through ``progress``, stop it by cancelling the task that awaits it.
///
/// ```swift
/// let session = MergeSession(job)
/// let watcher = Task { for await step in session.progress { print(step.fractionCompleted) } }
/// let report = try await session.run()
/// await watcher.value
/// ```
///
/// The merge runs on a thread of its own (FFmpeg's work blocks), never on the caller's
/// executor. A session runs once. Cancelling the awaiting task stops the merge within a fraction
/// of a second; it then throws `CancellationError` and leaves no part of the output. The session
/// installs no signal handlers: SIGINT and SIGTERM remain the host program's. It sets FFmpeg's
/// log level to quiet for the whole process (vmerge reports problems itself).
public final class MergeSession: Sendable {
    /// How far the merge has got.
    public struct Progress: Sendable, Equatable {
        public enum Phase: String, Sendable {
            /// Reading each clip's streams and metadata.
            case probing
            case encoding
            case done
        }

        public var phase: Phase
        /// The clip being probed or encoded, from 1, and how many there are.
        public var clip: Int
        public var clipCount: Int
        public var file: String?
        /// 0...1 of the whole merge.
        public var fractionCompleted: Double
        /// Output seconds written so far, and planned in all.
        public var outputSeconds: Double
        public var totalSeconds: Double
        public var elapsedSeconds: Double
        /// Seconds of output made per second, once there is enough to tell.
        public var speed: Double?
        /// Seconds left at the speed so far.
        public var estimatedSecondsRemaining: Double?

        init(_ step: MergeProgress) {
            phase = Phase(rawValue: step.phase.rawValue) ?? .encoding
            clip = step.item
            clipCount = step.itemCount
            file = step.file
            fractionCompleted = step.fraction
            outputSeconds = Double(step.doneMicros) / 1e6
            totalSeconds = Double(step.totalMicros) / 1e6
            elapsedSeconds = step.elapsedSeconds
            speed = step.speed
            estimatedSecondsRemaining = step.etaSeconds
        }
    }

    public let job: MergeJob
    /// Steps of the merge, at most every 100 ms while encoding; it finishes when the run ends.
    /// One consumer reads it; steps it has not read yet are kept up to the newest 64.
    public let progress: AsyncStream<Progress>
    private let steps: AsyncStream<Progress>.Continuation
    private let state = Locked(State())

    private struct State {
        var started = false
        var warnings: [String] = []
    }

    public init(_ job: MergeJob) {
        self.job = job
        (progress, steps) = AsyncStream.makeStream(of: Progress.self, bufferingPolicy: .bufferingNewest(64))
    }

    deinit { steps.finish() }

    /// Runs the merge to its end and returns its report.
    ///
    /// - Throws: ``MergeError`` when the output was not made (with the report, when the merge
    ///   got that far); `CancellationError` when the task was cancelled.
    public func run() async throws -> MergeReport {
        let first = state.withLock { state in
            defer { state.started = true }
            return !state.started
        }
        guard first else {
            throw MergeError(kind: .invalidJob, file: nil, message: "a session runs once; make a new one")
        }
        // Only the run that owns the stream ends it (a refused second call must not).
        defer { steps.finish() }
        let runnable = try job.runnable()
        try Task.checkCancellation()
        let token: CancelToken
        do { token = try CancelToken() } catch let error as VMergeError { throw MergeError(error) }
        let performed: Performed = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let thread = Thread { [self] in
                    continuation.resume(returning: perform(runnable, cancelToken: token))
                }
                // FFmpeg's decoders want more than a secondary thread's default stack.
                thread.stackSize = 8 << 20
                thread.start()
            }
        } onCancel: {
            token.cancel(signal: SIGTERM)
        }
        return try finish(performed, cancelled: Task.isCancelled)
    }

    /// The outcome as the caller sees it: the report, or the error that says why there is none.
    private func finish(_ performed: Performed, cancelled: Bool) throws -> MergeReport {
        switch performed {
        case let .refused(message):
            throw MergeError(kind: .invalidJob, file: nil, message: message)
        case let .failedToStart(error):
            throw MergeError(error)
        case let .ran(outcome, reportError):
            if let conflict = outcome.vetoed {
                throw MergeError(kind: .invalidJob, file: job.reportURL.map { FileName.decode(FileLocation($0).bytes) }, message: conflict)
            }
            let report = MergeReport(outcome.report, warnings: state.withLock { $0.warnings })
            if report.status == .cancelled && cancelled { throw CancellationError() }
            if let failure = outcome.failure { throw MergeError(failure, report: report) }
            if let reportError { throw MergeError(reportError, report: report) }
            return report
        }
    }

    private func perform(_ runnable: Job, cancelToken: CancelToken) -> Performed {
        VMergeProcess.silenceFFmpeg()
        let run = MergeRun(job: runnable, reportPath: job.reportURL.map { FileName.decode(FileLocation($0).bytes) })
        return run.perform(
            onDiagnostic: { [state] diagnostic in
                let text = diagnostic.file.map { "\($0): \(diagnostic.message)" } ?? diagnostic.message
                state.withLock { $0.warnings.append(text) }
            },
            onProgress: { [steps] step in steps.yield(Progress(step)) }, context: MergeContext(cancel: cancelToken))
    }
}

/// A value behind a lock, for what the merge's thread and the caller share.
final class Locked<Value>: @unchecked Sendable {
    private var value: Value
    private let lock = NSLock()

    init(_ value: Value) { self.value = value }

    func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
