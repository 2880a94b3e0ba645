import Foundation
import VMergeCore
import VMergeJobs

/// A queued job as the database keeps it (the `spec` column): one line of a batch job list, with
/// absolute inputs and output and every job option in force, so a worker on another machine (or
/// another vmerge version's defaults) runs exactly what was added. Read back by the job-list
/// decoder, with all of its checks. A job submitted over HTTP carries, besides, where it may read
/// and write (`input_roots`, `output_folder`: the operator's --allow-inputs and --allow-outputs),
/// kept to by the worker that runs it: inputs are opened walking down from a root without
/// following a link out of it, and the set is published in that one folder. A worker too old to
/// know these fields refuses the spec (unknown field) rather than run it unconfined.
package enum JobSpec {
    static let inputRootsField = "input_roots"
    static let outputFolderField = "output_folder"

    /// `job` with its paths made absolute against the current folder (a worker has another); an
    /// object's or an https name stays as it is (it names the same thing from every machine).
    package static func absolute(_ job: Job) -> Job {
        var job = job
        let absolute = { (name: FileName) in RemoteName.looksRemote(name.escaped) ? name : name.absolute }
        for index in job.inputs.indices { job.inputs[index].path = absolute(job.inputs[index].path) }
        job.output = absolute(job.output)
        return job
    }

    package static func json(of job: Job) -> JSON {
        var settings = JobSettings()
        settings.merge = job.options
        settings.minFree = job.minFree
        // Every option's value in force (the report's null: not set); numbers as text, exact.
        // An option newer than the queue's workers may be is left out at its default.
        let options: [(String, JSON)] = JobOption.all.compactMap { option in
            guard option.reportValue(in: settings) != .null, let text = option.recordedValue(in: settings) else {
                return nil
            }
            return (option.name, option.kind == .flag ? .bool(text == "true") : .string(text))
        }
        var fields: [(String, JSON)] = [
            ("name", .string(job.name)),
            ("inputs", .array(job.inputs.map(json(of:)))),
            ("output", .string(job.output.escaped)),
            ("options", .object(options)),
        ]
        if let confinement = job.confinement {
            fields.append((inputRootsField, .array(([confinement.root] + confinement.allowed).map { .string($0) })))
        }
        if let folder = job.outputFolder { fields.append((outputFolderField, .string(folder))) }
        // Where its events go, and what they carry back: a worker too old for them refuses the spec.
        if !job.notify.isEmpty { fields.append(("notify", .array(job.notify.map { .string($0) }))) }
        if let metadata = job.metadata { fields.append(("metadata", metadata)) }
        // Only when there are any: a worker too old for them refuses the spec.
        if !job.options.renditions.isEmpty {
            fields.append(("renditions", .array(job.options.renditions.map { .string($0.spec) })))
        }
        return .object(fields)
    }

    /// A path, or with a trim or a title the job file's input object; times as exact decimal
    /// seconds (a JSON number would go through a Double).
    static func json(of input: JobInput) -> JSON {
        guard input.edit != .whole else { return .string(input.path.escaped) }
        let seconds = { (micros: Int64) in String(format: "%lld.%06lld", micros / 1_000_000, micros % 1_000_000) }
        var fields: [(String, JSON)] = [("path", .string(input.path.escaped))]
        if let start = input.edit.startMicros { fields.append(("start", .string(seconds(start)))) }
        if let end = input.edit.endMicros { fields.append(("end", .string(seconds(end)))) }
        if let title = input.edit.title { fields.append(("title", .string(title))) }
        return .object(fields)
    }

    /// The job a spec describes; `file` names it in errors (the queue and the job's id).
    package static func job(from text: String, file: String) throws -> Job {
        var job: Job
        var roots: [String]?
        var outputFolder: String?
        do throws(JobOptionError) {
            var object = try JobFile.object(fromStored: text)
            if let value = object.removeValue(forKey: inputRootsField) {
                guard let list = value as? [String], !list.isEmpty, list.allSatisfy({ $0.hasPrefix("/") }) else {
                    throw JobOptionError("\(inputRootsField) is not a list of absolute folders")
                }
                roots = list
            }
            if let value = object.removeValue(forKey: outputFolderField) {
                guard let folder = value as? String, folder.hasPrefix("/") else {
                    throw JobOptionError("\(outputFolderField) is not an absolute folder")
                }
                outputFolder = folder
            }
            job = try JobFile.decode(object, over: JobSettings(), inputsRequired: true, outputRequired: true)
        } catch {
            throw VMergeError.invalidInput(file: file, reason: "unusable job spec: \(error.description)")
        }
        if let roots { job.confinement = InputConfinement(root: roots[0], allowed: Array(roots.dropFirst())) }
        job.outputFolder = outputFolder
        if job.name.isEmpty { job.name = Job.name(ofOutput: job.output) }
        return job
    }

    /// The queue's identity of a job: its job key (inputs' names, sizes and times, trims and
    /// titles, and the options that shape the output) and its output, so the same inputs merged
    /// into two outputs are two jobs, and the same job added twice is one.
    package static func key(of job: Job) -> String {
        let inputs = (try? InputList.expand(job.inputs, order: job.order)) ?? job.inputs
        // The job key covers the job's own picture; the queue's identity its renditions too.
        let renditions = job.options.renditions.map(\.keyText).joined(separator: " ")
        return JobKey.make(
            inputs: inputs, root: nil, options: job.options,
            salt: "queue output \(job.output.escaped)" + (renditions.isEmpty ? "" : " renditions \(renditions)"))
    }
}
