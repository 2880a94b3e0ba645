/// What a dry run found that the merge itself would meet, beyond the plan: what is under the
/// output's name, the size the free-space check would ask for, and everything that would stop the
/// merge (a dry run lists them all, where the merge stops at the first). A CI step runs the dry
/// run as its preflight: its exit says whether the merge would work.
package struct Preflight: Sendable {
    /// A file already under the output's name.
    package enum Existing: String, Sendable {
        /// A finished output this user's vmerge made of this very job (its job key): the merge
        /// would skip it.
        case thisJob = "this-job"
        /// Another file of this user's (no job key, or another job's): replaced only with -y.
        case anotherFile = "another-file"
        /// Another user's file: replaced only with -y.
        case anotherUsersFile = "another-users-file"
    }

    package var existing: Existing?
    /// The free-space check's estimate of the output (see `FreeSpace.estimatedOutputBytes`).
    package var estimatedBytes: Int64
    /// What would stop the merge, in the order it would meet them; empty when it would work (or
    /// find its output already made).
    package var problems: [VMergeError]

    package init(existing: Existing?, estimatedBytes: Int64, problems: [VMergeError]) {
        self.existing = existing
        self.estimatedBytes = estimatedBytes
        self.problems = problems
    }

    /// How the merge would exit: as for the first problem it would meet.
    package var exit: Exit {
        switch problems.first {
        case nil: return .success
        case .nothingToMerge?: return .nothingToMerge
        case .outputIsInput?: return .usage
        default: return .failure
        }
    }
}
