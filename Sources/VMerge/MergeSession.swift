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
    public struct Progress: Sendable, Hashable, Codable {
        /// What the merge is doing.
        public enum Phase: String, Sendable, Hashable, Codable {
            /// Reading each clip's streams and metadata.
            case probing
            /// Writing the output.
            case encoding
            /// Finished.
            case done
        }

        /// What the merge is doing.
        public var phase: Phase
        /// The clip being probed or encoded, from 1.
        public var clip: Int
        /// How many clips there are.
        public var clipCount: Int
        /// The file being probed or encoded.
        public var file: FileLocation?
        /// 0...1 of the whole merge.
        public var fractionCompleted: Double
        /// Output seconds written so far.
        public var outputSeconds: Double
        /// Output seconds planned in all.
        public var totalSeconds: Double
        /// Seconds since the merge began.
        public var elapsedSeconds: Double
        /// Seconds of output made per second, once there is enough to tell.
        public var speed: Double?
        /// Seconds left at the speed so far.
        public var estimatedSecondsRemaining: Double?

        init(_ step: MergeProgress) {
            phase = Phase(rawValue: step.phase.rawValue) ?? .encoding
            clip = step.item
            clipCount = step.itemCount
            file = step.file.map(FileLocation.init(escaped:))
            fractionCompleted = step.fraction
            outputSeconds = Double(step.doneMicros) / 1e6
            totalSeconds = Double(step.totalMicros) / 1e6
            elapsedSeconds = step.elapsedSeconds
            speed = step.speed
            estimatedSecondsRemaining = step.etaSeconds
        }
    }

    /// Where a session is, as `AVAssetExportSession.status` says it.
    public enum Status: String, Sendable, Hashable, Codable {
        /// ``run()`` has not been called.
        case waiting
        /// Probing or encoding.
        case running
        /// ``run()`` returned a report.
        case completed
        /// ``run()`` threw a ``MergeError``.
        case failed
        /// Cancelled: by ``cancel()`` or by cancelling the task awaiting ``run()``.
        case cancelled
    }

    /// The job the session runs.
    public let job: MergeJob
    /// Steps of the merge, at most every 100 ms while encoding; it finishes when the run ends.
    /// One consumer reads it; steps it has not read yet are kept up to the newest 64.
    public let progress: AsyncStream<Progress>
    private let steps: AsyncStream<Progress>.Continuation
    private let state = Locked(State())

    private struct State {
        var status = Status.waiting
        var started = false
        var latest: Progress?
        /// Set by `cancel()`; the tokens of the merges running (the run, inspections), to stop them.
        var cancelled = false
        var tokens: [CancelToken] = []
    }

    /// A session for `job`; nothing happens until ``run()`` or ``inspect()``.
    public init(_ job: MergeJob) {
        self.job = job
        (progress, steps) = AsyncStream.makeStream(of: Progress.self, bufferingPolicy: .bufferingNewest(64))
    }

    deinit { steps.finish() }

    /// Where the session is now; readable from any thread while it runs.
    public var status: Status { state.withLock { $0.status } }

    /// The latest step of the merge (nil before the first): ``progress``'s newest, for a caller
    /// that polls rather than iterates.
    public var latestProgress: Progress? { state.withLock { $0.latest } }

    /// Stops the session, as cancelling the task awaiting ``run()`` does: a merge under way
    /// within a fraction of a second, leaving no part of the output, and ``run()`` throws
    /// `CancellationError`. Called before ``run()``, the run stops before it starts; an
    /// ``inspect()`` under way or asked for later stops too. A cancelled session stays so.
    public func cancel() {
        let tokens = state.withLock { state -> [CancelToken] in
            state.cancelled = true
            // A run under way says how it ended when it ends (it may have finished already).
            if state.status == .waiting { state.status = .cancelled }
            return state.tokens
        }
        for token in tokens { token.cancel(signal: SIGTERM) }
    }

    /// Runs the merge to its end and returns its report. The output records the job's key (unless
    /// ``MergeJob/stripsMetadata``): run again on the same clips and options, it finds its output
    /// already made and returns at once with status ``MergeReport/Status-swift.enum/skipped``.
    ///
    /// - Throws: ``MergeError`` when the output was not made (with the report, when the merge
    ///   got that far); `CancellationError` when the task was cancelled or ``cancel()`` called.
    public func run() async throws -> MergeReport {
        let first = state.withLock { state in
            defer { state.started = true }
            if !state.started && state.status == .waiting { state.status = .running }
            return !state.started
        }
        guard first else {
            throw MergeError(code: .invalidJob, file: nil, message: "a session runs once; make a new one")
        }
        // Only the run that owns the stream ends it (a refused second call must not).
        defer { steps.finish() }
        do {
            let report = try await execute(job, reportingProgress: true)
            state.withLock { $0.status = .completed }
            return report
        } catch is CancellationError {
            state.withLock { $0.status = .cancelled }
            throw CancellationError()
        } catch {
            state.withLock { $0.status = .failed }
            throw error
        }
    }

    /// What the job would make, without making it: every clip read, its video (codec, size,
    /// rotation, mirroring, HDR), its sound (or none: silence there), the crop that fills the
    /// output, which clips would be dropped and why, and the output's planned length and
    /// estimated size. The job's dry run (``MergeJob/isDryRun``), as values: nothing is
    /// written, not even its report, and the session can still ``run()`` (unless cancelled).
    ///
    /// A preflight: it does not stop at the first problem. Every clip is listed with its fate
    /// (an unusable one as ``MergeReport/Clip/Status-swift.enum/invalid`` with its reason), what
    /// is under the output's name is said (``MergeReport/Output/existing``: this job's output,
    /// which ``run()`` would skip, or another file), and ``MergeReport/problems`` holds
    /// everything that would make ``run()`` fail; empty, ``run()`` would work.
    ///
    /// - Throws: ``MergeError`` only when the job cannot be planned at all (a value out of
    ///   range, an input folder or list that cannot be read); `CancellationError` as ``run()``
    ///   does.
    public func inspect() async throws -> MergeReport {
        var plan = job
        plan.isDryRun = true
        plan.reportFile = nil
        plan.deletesSources = false
        return try await execute(plan, reportingProgress: false)
    }

    /// Runs `job` on a thread of its own (FFmpeg's work blocks), stopped by the task's
    /// cancellation or `cancel()`.
    private func execute(_ job: MergeJob, reportingProgress: Bool) async throws -> MergeReport {
        try Task.checkCancellation()
        if state.withLock({ $0.cancelled }) { throw CancellationError() }
        let runnable = try job.runnable()
        let token: CancelToken
        do { token = try CancelToken() } catch let error as VMergeError { throw MergeError(error) }
        let cancelledBefore = state.withLock { state in
            if !state.cancelled { state.tokens.append(token) }
            return state.cancelled
        }
        if cancelledBefore { throw CancellationError() }
        defer { state.withLock { $0.tokens.removeAll { $0 === token } } }
        let warnings = Locked<[MergeReport.Warning]>([])
        let performed: Performed = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let thread = Thread { [self] in
                    continuation.resume(
                        returning: perform(
                            runnable, reportFile: job.reportFile, cancelToken: token, warnings: warnings,
                            reportingProgress: reportingProgress))
                }
                // FFmpeg's decoders want more than a secondary thread's default stack.
                thread.stackSize = 8 << 20
                thread.start()
            }
        } onCancel: {
            token.cancel(signal: SIGTERM)
        }
        let cancelled = Task.isCancelled || state.withLock { $0.cancelled }
        return try finish(
            performed, reportFile: job.reportFile, cancelled: cancelled, warnings: warnings.withLock { $0 })
    }

    /// The outcome as the caller sees it: the report, or the error that says why there is none.
    private func finish(
        _ performed: Performed, reportFile: FileLocation?, cancelled: Bool, warnings: [MergeReport.Warning]
    ) throws -> MergeReport {
        switch performed {
        case let .refused(clash):
            throw MergeError(code: .invalidJob, file: FileLocation(escaped: clash.file), message: clash.reason)
        case let .failedToStart(error):
            throw MergeError(error)
        case let .ran(outcome, reportError):
            let failure = outcome.end.failure?.error
            let report = MergeReport(outcome.report, failure: failure, warnings: warnings)
            switch outcome.end {
            case let .refused(conflict):
                throw MergeError(code: .invalidJob, file: reportFile, message: conflict)
            case .cancelled where cancelled: throw CancellationError()
            case .cancelled, .failed, .nothingToMerge:
                if let failure { throw MergeError(failure, report: report) }
            case .planned, .published, .upToDate: break
            }
            if let reportError { throw MergeError(reportError, report: report) }
            return report
        }
    }

    /// The run's context: this session's token, and messages naming options as this API does.
    private func context(_ cancelToken: CancelToken) -> MergeContext {
        var context = MergeContext(cancel: cancelToken)
        context.naming = MergeJob.naming
        return context
    }

    private func perform(
        _ runnable: Job, reportFile: FileLocation?, cancelToken: CancelToken, warnings: Locked<[MergeReport.Warning]>,
        reportingProgress: Bool
    ) -> Performed {
        VMergeProcess.silenceFFmpeg()
        let run = MergeRun(job: runnable, reportPath: reportFile?.jobName)
        // Each diagnostic becomes one of the report's warnings.
        let diagnostics = DiagnosticSink { diagnostic in
            warnings.withLock { $0.append(MergeReport.Warning(diagnostic)) }
        }
        return run.perform(
            diagnostics: diagnostics,
            onProgress: reportingProgress
                ? { [steps, state] step in
                    let progress = Progress(step)
                    state.withLock { $0.latest = progress }
                    steps.yield(progress)
                } : nil,
            context: context(cancelToken))
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
