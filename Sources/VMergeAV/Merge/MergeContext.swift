import CFFmpeg
import VMergeCore

/// What one run carries besides the user's choices (`MergeOptions`): how it is stopped, where
/// it may read, which job it is, what this FFmpeg build can do, and the tests' switches. The job
/// runner builds it once per job; the merger and its stages only read it.
package struct MergeContext: Sendable {
    /// Stops this merge alone (a queue worker's job, an API session), as SIGINT/SIGTERM stop
    /// every merge in the process.
    package var cancel: CancelToken?
    /// Where inputs may be read from (a watch job: its own folder); nil: anywhere.
    package var confinement: InputConfinement?
    /// The job's inputs that are not files here (objects in a bucket, https resources), by name.
    package var sources: (any InputSources)?
    /// The only folder the job's files (video, poster, report) may be published in (a watch job:
    /// OUTBOX), whatever its spec says; nil: where the job names them.
    package var outputFolder: String?
    /// The job's key (`JobKey`): the poster carries it, so a later run of the job knows a poster
    /// it left.
    package var jobKey: String?
    /// Whether the output records the key ("comment" metadata, see `JobTag`): keyed runs (batch,
    /// watch, the queue), which skip a job whose output already holds it.
    package var recordsJobKey = false
    /// The job's own video, found with its key but without all its renditions, stays as it is:
    /// the run makes only the renditions that are not there (the merger's `renditions`), and
    /// publishes those alone. The own picture is encoded again all the same, since it carries the
    /// timeline's counts and the summary, and is dropped.
    package var keepsOwnVideo = false
    /// With `keepsOwnVideo`: the job's renditions found with their keys, left as they are.
    package var keptRenditions: [Rendition] = []
    /// The job's key without its files' state (`JobKey.names`), for the output's tag.
    package var jobNames: String?
    /// Names the temporary output (see OutputTarget; watch: the claim); nil: pid and a random token.
    package var temporaryTag: String?
    /// Tests' switches; setting them decides `capabilities` again.
    package var hooks = MergeHooks() {
        didSet { capabilities = Capabilities.ofThisBuild(hiding: hooks.hiddenFilters) }
    }
    /// What this FFmpeg build can do, counting the hooks' hidden filters as missing.
    package private(set) var capabilities = Capabilities.ofThisBuild()
    /// How the door the job came in by names its options in messages: the command line's
    /// "--max-size", the Swift API's "maxSize".
    package var naming = OptionNaming.commandLine

    package init(cancel: CancelToken? = nil, hooks: MergeHooks = MergeHooks()) {
        self.cancel = cancel
        self.hooks = hooks
        capabilities = Capabilities.ofThisBuild(hiding: hooks.hiddenFilters)
    }

    /// The key the output records, when it records one.
    var recordedKey: String? { recordsJobKey ? jobKey : nil }
}

extension Capabilities {
    /// What the libraries linked in can do, counting `hidden` filters as missing.
    package static func ofThisBuild(hiding hidden: Set<String> = []) -> Capabilities {
        Capabilities(
            missingToneMapFilters: ["zscale", "tonemap"].filter {
                avfilter_get_by_name($0) == nil || hidden.contains($0)
            })
    }
}
