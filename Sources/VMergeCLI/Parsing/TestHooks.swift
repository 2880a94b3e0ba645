import VMergeCore

/// Environment variables that exist for vmerge's own tests: read here, once per run, and handed
/// to the library as the runs' `MergeHooks` (the library never reads the environment).
struct TestHooks: Equatable {
    /// VMERGE_TEST_HIDE_FILTERS=zscale[,tonemap]: filters to treat as missing from FFmpeg, so a
    /// full build takes the path of a build without them.
    var hiddenFilters: Set<String>

    /// VMERGE_TEST_KILL_AT=<point>: the process kills itself there (see `CrashPoint`).
    var killPoint: String?

    /// VMERGE_TEST_PAUSE_AT=<point> with VMERGE_TEST_PAUSE_FILE=<path>: the process waits there
    /// while the file exists (see `CrashPoint`).
    var pausePoint: String?
    var pauseFile: String?

    /// VMERGE_TEST_NO_PROGRESS=1: a worker writes no progress to the queue (to measure what
    /// writing it costs).
    var workerProgress: Bool

    /// VMERGE_TEST_DECODER_THREADS=<n> (1-64): video decoders run n threads, whatever the cores.
    var decoderThreads: Int32?

    /// VMERGE_TEST_UPLOAD_PART=<bytes> (at least 5 MiB): uploads to a bucket go multipart past it.
    var uploadPartBytes: Int64?

    /// VMERGE_TEST_EVENT_LEASE=<seconds> (1-600): a worker holds the events it takes this long.
    var eventLeaseSeconds: Double?

    /// VMERGE_TEST_PROGRESS_EVENTS=<seconds> (0.01-30): job.progress events this often.
    var progressEventSeconds: Double?

    init(environment: [String: String]) {
        workerProgress = environment["VMERGE_TEST_NO_PROGRESS"] != "1"
        hiddenFilters = Set((environment["VMERGE_TEST_HIDE_FILTERS"] ?? "").split(separator: ",").map(String.init))
        killPoint = environment["VMERGE_TEST_KILL_AT"]
        pausePoint = environment["VMERGE_TEST_PAUSE_AT"]
        pauseFile = environment["VMERGE_TEST_PAUSE_FILE"]
        uploadPartBytes = environment["VMERGE_TEST_UPLOAD_PART"].flatMap { Int64($0) }.flatMap {
            $0 >= 5 << 20 ? $0 : nil
        }
        eventLeaseSeconds = environment["VMERGE_TEST_EVENT_LEASE"].flatMap { Double($0) }.flatMap {
            (1...600).contains($0) ? $0 : nil
        }
        progressEventSeconds = environment["VMERGE_TEST_PROGRESS_EVENTS"].flatMap { Double($0) }.flatMap {
            (0.01...30).contains($0) ? $0 : nil
        }
        decoderThreads = environment["VMERGE_TEST_DECODER_THREADS"].flatMap { Int32($0) }.flatMap {
            (1...64).contains($0) ? $0 : nil
        }
    }

    /// The library's side of them.
    var merge: MergeHooks {
        var hooks = MergeHooks()
        hooks.hiddenFilters = hiddenFilters
        hooks.decoderThreads = decoderThreads
        hooks.uploadPartBytes = uploadPartBytes
        hooks.eventLeaseSeconds = eventLeaseSeconds
        hooks.progressEventSeconds = progressEventSeconds
        return hooks
    }

    /// `command` with the hooks for every merge it runs (each job of a batch, a watch folder or
    /// a worker).
    func applied(to command: Command) -> Command {
        guard case let .run(spec) = command else { return command }
        return .run(spec.applying(self))
    }
}

// Each command that merges takes the hooks where its merges read them (`CommandSpec.applying`).

extension MergeCommand {
    func applying(_ hooks: TestHooks) -> Self {
        var command = self
        command.hooks = hooks.merge
        return command
    }
}

extension BatchCommand {
    func applying(_ hooks: TestHooks) -> Self {
        var command = self
        command.hooks = hooks.merge
        return command
    }
}

extension WatchCommand {
    func applying(_ hooks: TestHooks) -> Self {
        var command = self
        command.watch.hooks = hooks.merge
        return command
    }
}

extension WorkerCommand {
    func applying(_ hooks: TestHooks) -> Self {
        var command = self
        command.settings.hooks = hooks.merge
        command.settings.publishesProgress = hooks.workerProgress
        return command
    }
}
