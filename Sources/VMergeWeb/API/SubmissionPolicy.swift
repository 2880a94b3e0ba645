import Foundation
import VMergeCore
import VMergeQueue

/// A refusal of the job API: an HTTP status and one line saying why (never a secret: names are
/// shown as `RemoteName.shown` shows them).
package struct APIError: Error, Sendable, Equatable {
    package let status: Int
    package let message: String
    /// Extra response headers (Retry-After, WWW-Authenticate).
    package var headers: [String: String] = [:]

    package init(_ status: Int, _ message: String, headers: [String: String] = [:]) {
        self.status = status
        self.message = message
        self.headers = headers
    }
}

/// Where a job from the network may read and write, as the operator allows (`vmerge dashboard
/// --allow-inputs DIR --allow-outputs DIR --allow-remote PREFIX`), and how many may wait. A job
/// body is a job-list line, read by the same decoder as `vmerge queue add`; then every name in it
/// is checked here, before anything is added, and the job carries its roots to the worker, which
/// keeps to them again when it runs (see `JobSpec`): a link planted under a root later still
/// leads nowhere outside it.
package struct SubmissionPolicy: Sendable, Equatable {
    /// Folders whose files (and subfolders', reached without links) a job may read.
    package var inputRoots: [String] = []
    /// Folders a job may write its output, poster and nothing else in (directly, not below).
    package var outputRoots: [String] = []
    /// Objects and https resources a job may name; nothing unless listed.
    package var remote = RemoteAccess(listingRequired: true)
    /// Queued jobs past which a submission is answered 429; nil: no limit.
    package var maxQueued: Int?
    package var maxAttempts = 3

    package init() {}

    /// The job `body` asks for, with its roots; or why it is refused (422: not a job; 403: a
    /// name outside what the operator allows).
    package func job(from body: [UInt8]) -> Result<Job, APIError> {
        var job: Job
        do throws(JobOptionError) {
            job = try JobFile.decode(
                try JobFile.object(from: Data(body)), over: JobSettings(), inputsRequired: true, outputRequired: true)
        } catch {
            return .failure(APIError(422, "not a job: \(error.description)"))
        }
        if let problem = OutputContainer.problem(withName: job.output.escaped) {
            return .failure(APIError(422, "\(shown(job.output.escaped)): \(problem)"))
        }
        let remote = job.inputs.filter { RemoteName.looksRemote($0.path.escaped) }
        if !remote.isEmpty && remote.count != job.inputs.count {
            return .failure(
                APIError(422, "a job reads files under --allow-inputs or objects under --allow-remote, not both"))
        }
        do throws(APIError) {
            // Events are signed with the workers' one secret: a caller may send them only to the
            // receivers the operator lists, never to another's with metadata of its choosing.
            if let url = self.remote.firstUnlisted(job.notify) {
                throw APIError(
                    403, "\(RemoteName.shown(url)): events go only to receivers under the operator's --allow-remote")
            }
            for input in job.inputs { try checkRemote(input.path.escaped, output: false) }
            if remote.isEmpty { job.confinement = try confinement(of: job.inputs.map(\.path.escaped)) }
            let output = job.output.escaped
            if RemoteName.looksRemote(output) {
                // Its poster and renditions are objects beside it, each under a listed prefix too.
                for (name, _) in job.publishedFiles { try checkRemote(name.escaped, output: true) }
            } else {
                let folder = try outputFolder(of: output)
                for (name, role) in job.publishedFiles.dropFirst()
                where SafeFile.split(name.escaped).folder != SafeFile.split(output).folder {
                    throw APIError(403, "\(name.escaped): a \(role) is written beside its output")
                }
                job.outputFolder = folder
            }
        } catch {
            return .failure(error)
        }
        if job.name.isEmpty { job.name = Job.name(ofOutput: job.output) }
        return .success(job)
    }

    /// An object's or an https name's problem: unreadable, not an object the job may write, or
    /// not under a listed prefix. A local name passes (the roots are checked apart).
    private func checkRemote(_ text: String, output: Bool) throws(APIError) {
        guard RemoteName.looksRemote(text) else { return }
        guard let name = RemoteName(text) else { throw APIError(422, "\(shown(text)): not a name vmerge can use") }
        if output, case .https = name { throw APIError(422, "\(name): an output goes to s3://bucket/key.mp4") }
        if let problem = remote.problem(with: name) { throw APIError(403, "\(name) \(problem)") }
    }

    /// The confinement of local inputs: each one absolute, under a root, there, and reached
    /// without a link.
    private func confinement(of inputs: [String]) throws(APIError) -> InputConfinement {
        guard let first = inputRoots.first else {
            throw APIError(403, "\(shown(inputs.first ?? "")): this server takes no files as inputs (--allow-inputs)")
        }
        let confinement = InputConfinement(root: first, allowed: Array(inputRoots.dropFirst()))
        for path in inputs {
            try checkAbsolute(path)
            if case .failure = confinement.locate(path) {
                throw APIError(403, "\(shown(path)): outside the folders this server reads (--allow-inputs)")
            }
            do {
                switch try SafeFile.kind(of: path, confinedTo: confinement) {
                case .missing: throw VMergeError.invalidInput(file: path, reason: "no such file or folder")
                case .symlink:
                    throw VMergeError.invalidInput(
                        file: path, reason: "is a symbolic link; links are not followed here")
                default: break
                }
            } catch {
                throw APIError(422, VMergeError.message(of: error))
            }
        }
        return confinement
    }

    /// The root the output is written in, directly.
    private func outputFolder(of output: String) throws(APIError) -> String {
        try checkAbsolute(output)
        let folder = SafeFile.split(output).folder
        guard let root = outputRoots.first(where: { $0 == folder }) else {
            throw APIError(403, "\(shown(output)): not in a folder this server writes (--allow-outputs)")
        }
        return root
    }

    /// An absolute name, each component a name (no ".", "..", or empty one but a final "/").
    private func checkAbsolute(_ path: String) throws(APIError) {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        guard path.hasPrefix("/"), !parts.dropLast().contains(where: { $0.isEmpty || $0 == "." || $0 == ".." }),
            parts.last != "." && parts.last != ".."
        else {
            throw APIError(422, "\(shown(path)): a job over HTTP names absolute paths, without '.' or '..'")
        }
    }

    private func shown(_ text: String) -> String {
        VisibleText.of(RemoteName.printable(text))
    }

    /// A folder given to --allow-inputs or --allow-outputs, as a root: absolute, without a
    /// trailing "/" or a "." or ".." component.
    package static func root(_ text: String) -> String? {
        guard text.hasPrefix("/") else { return nil }
        let parts = text.split(separator: "/")
        guard !parts.contains(where: { $0 == "." || $0 == ".." }) else { return nil }
        return "/" + parts.joined(separator: "/")
    }
}
