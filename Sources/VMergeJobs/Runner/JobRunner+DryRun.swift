import Foundation
import VMergeAV
import VMergeCore

extension JobRunner {
    /// A dry run: the merge's preflight. It writes, sweeps and deletes nothing, and where the
    /// merge stops at the first problem it goes on: every input is probed and listed with its
    /// fate (an unusable one with its reason, with --skip-invalid or not), what is under the
    /// output's name is said (this job's output by its key, or another file), with the size
    /// estimate; the report's exit is the one the merge would have (see `Preflight`).
    func dryRun(_ job: Job, _ resolved: ResolvedJob, _ start: RunStart) -> JobOutcome {
        let inputs: [JobInput]
        do { inputs = try resolved.inputs.get() } catch {
            return finish(
                job, resolved, .stopped(by: error, output: job.output.escaped, inputs: job.inputPaths, probed: nil),
                start)
        }
        let key = JobKey.make(
            inputs: inputs, root: job.keyRoot, options: job.options, salt: job.keySalt, sources: resolved.sources)
        // Every input probed: the invalid ones dropped with their reason, to be listed.
        var probing = job.options
        probing.skipInvalid = true
        var merger = Merger(
            options: probing, context: context(of: job, key: key, names: resolved.names, sources: resolved.sources),
            diagnostics: diagnostics,
            progress: onProgress)
        merger.warnsOfSkippedInputs = job.options.skipInvalid
        var probes: [InputProbe] = []
        var problems: [VMergeError] = []
        // Made earlier from files deleted since: done, -y or not (as the merge's done check).
        let madeEarlier = keyed && madeEarlierFromFilesGoneSince(job, resolved)
        let existing = existingOutput(job, key: key, madeEarlier: madeEarlier)
        // The merge would find its output made (unless -y makes it again), whatever it would
        // meet after.
        let skips = madeEarlier || (existing == .thisJob && skipsDone)
        if !skips {
            problems += Self.problem(of: job) { try checkOutputName(job, merger: merger, inputs: inputs.map(\.path)) }
        }
        var plan: MergePlan?
        do {
            plan = try merger.makePlan(probing: inputs, into: &probes)
        } catch {
            guard let refusal = error as? VMergeError, case .nothingToMerge = refusal else {
                return finish(
                    job, resolved,
                    .stopped(by: error, output: job.output.escaped, inputs: inputs.map(\.path), probed: nil), start)
            }
            problems.append(refusal)
        }
        let planned =
            plan
            ?? MergePlan(
                probes: probes, edits: inputs.map(\.edit), options: probing, capabilities: context.capabilities)
        if !job.options.skipInvalid {
            // The merge would stop at the first; listed after the output's own problems, as met.
            problems.insert(
                contentsOf: Self.invalidInputs(probes),
                at: problems.firstIndex { $0.isNothingToMerge } ?? problems.endIndex)
        }
        if let plan, problems.isEmpty, !skips {
            problems += Self.problem(of: job) {
                try FreeSpace.check(
                    output: job.output.escaped, durationMicros: plan.durationMicros, options: job.options,
                    required: job.minFree
                )
            }
        }
        let preflight = Preflight(
            existing: existing,
            estimatedBytes: FreeSpace.estimatedOutputBytes(
                durationMicros: planned.durationMicros, options: job.options),
            problems: skips ? [] : problems)
        return finish(job, resolved, .planned(planned, preflight), start)
    }

    /// What `check` throws, as the merge would say it: nothing, or one problem.
    private static func problem(of job: Job, _ check: () throws -> Void) -> [VMergeError] {
        do {
            try check()
            return []
        } catch {
            return [VMergeError.of(error) { .io(file: job.output.escaped, message: $0) }]
        }
    }

    /// Each input probing found unusable, as the merge would refuse it.
    private static func invalidInputs(_ probes: [InputProbe]) -> [VMergeError] {
        probes.compactMap { probe in
            guard case let .invalid(path, reason) = probe else { return nil }
            return .invalidInput(file: path, reason: reason)
        }
    }

    /// What is under the output's name, read as the merge's done check reads it.
    private func existingOutput(_ job: Job, key: String, madeEarlier: Bool) -> Preflight.Existing? {
        guard FileKind.at(FileName(job.output.escaped)) != .missing else { return nil }
        if madeEarlier || (keyed && OutputOnDisk.holds(job.output.escaped, key: key)) {
            return .thisJob
        }
        return OutputOnDisk.foreignOwner(of: job.output.escaped) != nil ? .anotherUsersFile : .anotherFile
    }
}

extension VMergeError {
    var isNothingToMerge: Bool {
        if case .nothingToMerge = self { return true }
        return false
    }
}
