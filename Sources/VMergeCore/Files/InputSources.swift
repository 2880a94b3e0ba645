/// Where a job's inputs that are not files here are read from: the runner's registry of the remote
/// objects it resolved, handed down in `MergeContext` to every place that opens an input (probe,
/// decode, loudness, recording time), so that each opens the same source by the input's name.
package protocol InputSources: AnyObject, Sendable {
    /// The source a remote input's name stands for; nil for a local name. Throws why the object
    /// cannot be read (missing, refused), as `VMergeError` naming it.
    func source(named name: String) throws -> (any RandomAccessSource)?
    /// What the job key records of a remote input's state (its size and tag), in place of a file's
    /// size and time; nil for a local name.
    func keyState(named name: String) -> String?
}
