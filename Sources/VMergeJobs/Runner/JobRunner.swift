import CVMergeSupport
import Foundation
import VMergeAV
import VMergeCore
import VMergeRemote

/// Runs one job, as six steps: resolve its inputs, check whether it is done already, plan, encode,
/// publish, consume its sources. Each step hands the next a typed result or ends the job
/// (`JobEnd`); whatever happens, the outcome carries a complete report, made once from how the
/// job ended. Used by the command line, the Swift API, batch, watch and the queue's workers.
package struct JobRunner {
    package static let version = "0.1.0"

    /// Who runs the job, and so how it is run.
    package enum Door: Sendable {
        /// `vmerge a.mov b.mov -o out.mp4` and the Swift API. The output records the job's key
        /// unless `recordsKey` is false (--strip-metadata: the tag names the inputs); a second run
        /// skips an output holding it unless `remakesDone` (-y). Sources are deleted here. `report`
        /// (merge --report) is published with the output as one set, before it, replacing only
        /// what its policy allows; the poster may not take its place, and a job whose inputs
        /// include it is refused (`JobEnd.refused`).
        case merge(recordsKey: Bool, remakesDone: Bool, report: ReportFile?)
        /// One job of `vmerge batch`: keyed; the batch deletes sources, deciding across its jobs.
        case batch
        /// A watch folder's job: keyed; its claim deletes the sources; its temporary files are
        /// named after the claim.
        case watch(claimToken: String)
        /// A queue worker's job: keyed; it deletes its own sources.
        case worker
    }

    /// Where the job's warnings, notes and deleted files go (the door's sink, scoped to the job).
    package var diagnostics: DiagnosticSink
    package var onProgress: ((MergeProgress) -> Void)?
    /// Where the job's events go (--notify); nil: nowhere.
    package var events: JobEvents?
    /// Reads "-" for --inputs-from.
    package var readStandardInput: () throws -> String = { "" }
    /// Record the job key in the output, and skip the job when the output already holds it.
    let keyed: Bool
    /// With `keyed`: a job whose output holds its key is done. False (a merge with -y) makes it
    /// again all the same, still recording the key.
    let skipsDone: Bool
    /// What every job's run carries (its cancel token, the temporary's tag, tests' hooks); each
    /// job's own context adds its confinement, key and names (`context(of:key:names:)`).
    let context: MergeContext
    /// With --delete-sources: false leaves the deleting to the caller, which gets the ledger
    /// (a batch decides across its jobs, watch deletes from its claim).
    let deletesSources: Bool
    /// The run's JSON report, prepared before the run (merge's --report; see `Door.merge`).
    let reportTarget: ReportFile?
    /// Makes the clients remote inputs are read with (credentials found once per runner); its
    /// transfers stop when the job is cancelled, as its decoding does.
    let connector: RemoteConnector

    package init(
        _ door: Door, context: MergeContext = MergeContext(), diagnostics: DiagnosticSink,
        onProgress: ((MergeProgress) -> Void)? = nil
    ) {
        self.diagnostics = diagnostics
        self.onProgress = onProgress
        var context = context
        switch door {
        case let .merge(recordsKey, remakesDone, report):
            (keyed, skipsDone, deletesSources, reportTarget) = (recordsKey, !remakesDone, true, report)
        case .batch: (keyed, skipsDone, deletesSources, reportTarget) = (true, true, false, nil)
        case let .watch(token):
            (keyed, skipsDone, deletesSources, reportTarget) = (true, true, false, nil)
            context.temporaryTag = token
        case .worker: (keyed, skipsDone, deletesSources, reportTarget) = (true, true, true, nil)
        }
        self.context = context
        connector = JobRunner.connector(for: context)
    }

    /// What a run's remote files are reached through: its transfers stop when the run is
    /// cancelled, as its decoding does.
    package static func connector(for context: MergeContext) -> RemoteConnector {
        let cancel = context.cancel
        return RemoteConnector(
            uploadPart: context.hooks.uploadPartBytes, stopSignal: { cancel.map { $0.signal } ?? vm_cancel_signal() })
    }

    package func run(_ job: Job) -> JobOutcome {
        let start = RunStart()
        let resolved = resolve(job)
        if job.dryRun { return dryRun(job, resolved, start) }
        do throws(EndedEarly) {
            let work = try doneCheck(job, resolved)
            sayStarted(job)
            let (plan, folders) = try self.plan(job, work)
            let encoded = try encode(plan, job, work, folders, start)
            CrashPoint.here("before-publish")
            let result = try publish(encoded, of: plan, job, work, folders, start)
            CrashPoint.here("after-video")
            let consumed = consume(
                result.plan, output: result.output.path,
                uploadedThrough: work.remoteOutput,
                writtenMicros: result.output.durationMicros, of: job, sources: resolved.sources)
            return finish(
                job, resolved, .published(.init(result: result, consumption: consumed)), start, folders: folders)
        } catch {
            return finish(job, resolved, error.end, start)
        }
    }

    /// 1. Named inputs plus --inputs-from, folders expanded, read once; or why they cannot be had
    /// (a job made earlier may have deleted them: the next step asks).
    private func resolve(_ job: Job) -> ResolvedJob {
        let remote = remoteInputs(for: job)
        return ResolvedJob(
            names: JobKey.names(
                inputs: job.namesInputs ?? job.inputs, root: job.keyRoot, options: job.options, salt: job.keySalt),
            inputs: Result { try resolveInputs(job, remote: remote) }, sources: remote)
    }

    /// 2. Whether the job is still to be made. Not when the output holds this very job (only that
    /// counts as done: another file under the name is refused at the next step unless -y), nor
    /// when it was made earlier from files that are gone since. Refused when its report would
    /// land on an input.
    private func doneCheck(_ job: Job, _ resolved: ResolvedJob) throws(EndedEarly) -> JobWork {
        if keyed && madeEarlierFromFilesGoneSince(job, resolved) {
            throw EndedEarly(consumeWhatIsLeft(of: job, resolved))
        }
        if keyed && madeEarlierFromObjectsGoneSince(job, resolved) {
            throw EndedEarly(.upToDate(.init(madeEarlier: true)))
        }
        let inputs: [JobInput]
        let remoteOutput: RemoteOutput?
        do {
            inputs = try resolved.inputs.get()
            remoteOutput = try self.remoteOutput(of: job)
            // An object is never both: the upload would replace the very source (-y or not); nor is
            // the poster or a rendition beside it.
            if remoteOutput != nil {
                let written = job.publishedFiles.map(\.name.escaped)
                for name in written where inputs.contains(where: { RemoteName.sameObject($0.path.escaped, name) }) {
                    throw VMergeError.outputIsInput(file: RemoteName.canonical(name))
                }
            }
        } catch {
            throw EndedEarly(.stopped(by: error, output: job.output.escaped, inputs: job.inputPaths, probed: nil))
        }
        if let reportTarget, inputs.contains(where: { reportTarget.lands(on: $0.path) }) {
            throw EndedEarly(.refused("the report would overwrite an input video"))
        }
        // The poster carries a key even where the video does not (a merge): a run of the same
        // job takes a poster its killed predecessor left as its own.
        let key = JobKey.make(
            inputs: inputs, root: job.keyRoot, options: job.options, salt: job.keySalt, sources: resolved.sources)
        var merger = Merger(
            options: job.options, context: context(of: job, key: key, names: resolved.names, sources: resolved.sources),
            diagnostics: diagnostics,
            progress: progress(of: job))
        // Done when its video and every rendition hold their keys (each file read once).
        let checksDone = keyed && skipsDone
        let renditionsHeld =
            checksDone && remoteOutput == nil && OutputOnDisk.holds(job.output.escaped, key: key)
            && keepsMadeFiles(of: job, key: key, merger: &merger)
        let work = JobWork(inputs: inputs, key: checksDone ? key : nil, merger: merger, remoteOutput: remoteOutput)
        if checksDone && (remoteOutput == nil ? renditionsHeld : holdsOutput(job, work, key: key)) {
            throw EndedEarly(finishDone(job, work))
        }
        return work
    }

    /// 3. Checks the output's name, sweeps what killed runs of it left, opens the folders the job
    /// publishes in (once: see `OutputFolder`), probes the inputs and decides what to keep, then
    /// checks the free space the plan needs. A failure keeps what was probed, for the report.
    private func plan(_ job: Job, _ work: JobWork) throws(EndedEarly) -> (MergePlan, PublishFolders) {
        var probes: [InputProbe] = []
        do {
            try checkAndSweep(job, merger: work.merger, inputs: work.inputs.map(\.path))
            try work.remoteOutput?.checkReplace(
                overwrite: job.options.overwrite, jobKey: work.key,
                companions: work.remoteOutput.map {
                    companions(of: job, key: work.key ?? work.merger.context.jobKey, in: $0)
                } ?? [])
            let folders = try PublishFolders(output: job.output.escaped, staging: work.remoteOutput?.staging)
            let plan = try work.merger.makePlan(probing: work.inputs, into: &probes)
            try FreeSpace.check(
                output: job.output.escaped, durationMicros: plan.durationMicros, options: job.options,
                required: job.minFree)
            return (plan, folders)
        } catch {
            let probed =
                probes.isEmpty
                ? nil
                : MergePlan(
                    probes: probes, edits: work.inputs.map(\.edit), options: job.options,
                    capabilities: context.capabilities)
            throw EndedEarly(ending(by: error, of: job, work, probed: probed))
        }
    }

    /// 4. The video and its poster, written and synced under temporary names in the output's folder.
    private func encode(
        _ plan: MergePlan, _ job: Job, _ work: JobWork, _ folders: PublishFolders, _ start: RunStart
    ) throws(EndedEarly) -> EncodedOutput {
        do {
            return try work.merger.encode(plan, to: job.output.escaped, in: folders.output, clock: start.clock)
        } catch {
            throw EndedEarly(ending(by: error, of: job, work, probed: plan))
        }
    }

    /// 5. Publishes the video with its poster and (merge --report) its report as one set, the
    /// report naming the output as it will be published. Another run of this very job (a queue
    /// worker whose lease ran out while it was stopped) may have published it meanwhile: then
    /// never a second time, not even with -y.
    private func publish(
        _ encoded: EncodedOutput, of plan: MergePlan, _ job: Job, _ work: JobWork, _ folders: PublishFolders,
        _ start: RunStart
    ) throws(EndedEarly) -> MergeResult {
        do {
            if let reportTarget {
                let report = makeReport(
                    job, inputs: work.inputs.map(\.path), .published(.init(result: encoded.result)), start)
                try reportTarget.join(encoded, report.json, outputIsRemote: work.remoteOutput != nil)
            }
            if let key = work.key, holdsOutput(job, work, key: key) {
                throw EndedEarly(.upToDate(.init(plan: plan)))
            }
            var alternative: (@Sendable (Int) -> String)?
            if let names = job.alternativeOutputs { alternative = { names.name($0) } }
            let result = try encoded.publish(overwrite: job.options.overwrite, alternative: alternative)
            guard let remote = work.remoteOutput else { return result }
            return try upload(
                result, to: remote, job, key: work.key ?? work.merger.context.jobKey,
                names: work.merger.context.jobNames, ownVideo: work.key != nil)
        } catch let ended as EndedEarly {
            encoded.discard()
            throw ended
        } catch {
            encoded.discard()
            throw EndedEarly(ending(by: error, of: job, work, probed: plan))
        }
    }

    /// How an error ends the job: as done when it is the output's name found taken by this very
    /// job, published meanwhile by another run of it (when the output was checked, made or
    /// published); else as the failure it is.
    private func ending(by error: any Error, of job: Job, _ work: JobWork, probed: MergePlan?) -> JobEnd {
        if let key = work.key, case .outputExists? = error as? VMergeError, holdsOutput(job, work, key: key) {
            return .upToDate(.init(plan: probed))
        }
        return .stopped(by: error, output: job.output.escaped, inputs: work.inputs.map(\.path), probed: probed)
    }

    /// The runner's context with this job's: where it may read and write, its key and names.
    func context(of job: Job, key: String?, names: String?, sources: (any InputSources)? = nil) -> MergeContext {
        var context = self.context
        context.confinement = job.confinement
        context.sources = sources
        context.outputFolder = job.outputFolder
        context.jobKey = key
        context.recordsJobKey = keyed
        context.jobNames = names
        return context
    }

    /// Not onto a video, nor onto the input list (-y or not); then the leftovers of runs that were
    /// killed (-9, power cut) in the output's folder, and of the report's. The poster's and the report's too:
    /// a file they replaced, kept aside until the video was published (see PublishSet), is a
    /// leftover once its run is dead.
    private func checkAndSweep(_ job: Job, merger: Merger, inputs: [FileName]) throws {
        try checkOutputName(job, merger: merger, inputs: inputs)
        // In the output's folder every dead run's temporaries, whatever they were for: a killed
        // run of this job with other renditions or another poster name left files this run does
        // not name. (A live run's are locked, and never taken.) The report may lie elsewhere.
        TemporaryFile.sweep(folder: SafeFile.split(job.output.escaped).folder)
        if let report = reportTarget.flatMap({ $0.isRemote ? nil : $0.path }) {
            let (folder, name) = SafeFile.split(report)
            TemporaryFile.sweep(folder: folder, target: name)
        }
    }

    /// What the merge refuses of the output's name (a dry run asks the same, and sweeps nothing).
    func checkOutputName(_ job: Job, merger: Merger, inputs: [FileName]) throws {
        // Another user's file under the name is not done whatever tag it carries, and is not
        // replaced without -y: said as such, not as a plain "output exists".
        if !job.options.overwrite, let owner = OutputOnDisk.foreignOwner(of: job.output.escaped) {
            throw VMergeError.outputNotOurs(file: job.output.escaped, owner: owner)
        }
        try merger.checkOutput(
            job.output.escaped, inputs: (inputs + [job.inputsFrom?.file].compactMap { $0 }).map(\.escaped),
            report: reportTarget?.path)
    }

    /// Named inputs plus --inputs-from, folders expanded, in the order asked for; each with
    /// its edit.
    package func resolveInputs(_ job: Job, remote: RemoteInputs? = nil) throws -> [JobInput] {
        var named = job.inputs
        if let from = job.inputsFrom {
            let text: String
            switch from {
            case let .file(name):
                text = FileName.decode(try SafeFile.readList(name.escaped, limit: InputList.maxListBytes))
            // `Location.reading` names no list standard output.
            case .standardInput, .standardOutput: text = try readStandardInput()
            // `Location.reading` names no object: a list is read from a file or standard input.
            case let .remote(name):
                throw VMergeError.invalidInput(file: name.description, reason: "an input list is a file or '-'")
            }
            let list = from.named
            let listed = InputList.parse(text)
            // The limit every door has, in bytes of the name (see FileName.maxPathBytes).
            if let problem = listed.lazy.compactMap({ FileName.lengthProblem(of: $0, field: "an input") }).first {
                throw VMergeError.invalidInput(file: list, reason: problem)
            }
            do throws(JobOptionError) {
                try JobFile.checkInputCount(named.count + listed.count)
            } catch {
                throw VMergeError.invalidInput(file: list, reason: error.description)
            }
            if listed.isEmpty && named.isEmpty {
                throw VMergeError.invalidInput(file: list, reason: "input list names no files")
            }
            named += listed.map { JobInput($0) }
        }
        if RemoteInputs.anyRemote(named) {
            // A job from outside (a watch job's file) names files under its own folder only.
            if job.confinement != nil, let url = named.first(where: { RemoteName.looksRemote($0.path.escaped) }) {
                throw VMergeError.invalidInput(
                    file: RemoteName.shown(url.path.escaped),
                    reason: "a watch job reads files in its own folder only, not URLs")
            }
            named = try (remote ?? RemoteInputs(connector: connector)).resolve(named, access: job.remoteAccess)
        }
        let inputs = try InputList.expand(named, order: job.order, confinedTo: job.confinement)
        guard job.order == .recorded else { return inputs }
        var unreadable: Set<FileName> = []
        let (ordered, untimed) = InputList.sorted(inputs) { path in
            do {
                return try RecordingClock.time(of: path.escaped, confinedTo: job.confinement, sources: remote)
            } catch {
                unreadable.insert(path)  // not a video: probing says so, no note about its time
                return nil
            }
        }
        for path in untimed where !unreadable.contains(path) {
            diagnostics(
                Diagnostic(
                    .note, file: path.escaped,
                    "its container gives no recording time: placed after the clips that have one, by name "
                        + "(--sort recorded)"))
        }
        return ordered
    }
}

/// When a run began: its report's start and the clock its timings read.
struct RunStart {
    let date = Date()
    let clock = Stopwatch()
}

/// Step 1's result: the names a job's key is made of, and its inputs or why there are none.
struct ResolvedJob {
    let names: String
    let inputs: Result<[JobInput], any Error>
    /// The job's remote inputs (objects, https), looked up once, read by every step.
    let sources: RemoteInputs?
}

/// The folder a job publishes in, opened once at step 3 and used for every file of its set from
/// then on (see `OutputFolder`); the report has its own, opened when it was prepared
/// (`ReportFile`).
struct PublishFolders {
    let output: OutputFolder

    /// - Parameter staging: the private folder a set bound for a bucket is written in first.
    init(output: String, staging: String? = nil) throws {
        if let staging {
            self.output = try OutputFolder(named: SafeFile.split(output).folder, opening: staging)
        } else {
            self.output = try OutputFolder(of: output)
        }
    }
}

/// Step 2's result: a job to be made, with its inputs, its key when the run is keyed, and the
/// one merger that plans, encodes and checks it.
struct JobWork {
    let inputs: [JobInput]
    let key: String?
    let merger: Merger
    /// The output's object, when it goes to a bucket.
    let remoteOutput: RemoteOutput?
}
