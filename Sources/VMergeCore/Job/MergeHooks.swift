/// Switches that exist for vmerge's own tests: no option sets them. The command line reads
/// them from the environment (its TestHooks); the library never does.
package struct MergeHooks: Sendable, Equatable {
    /// Filters to treat as missing from this FFmpeg build, so tests take a smaller build's path
    /// on a full one (VMERGE_TEST_HIDE_FILTERS).
    package var hiddenFilters: Set<String> = []
    /// Whether a trimmed clip is read from the keyframe before its trim start (false: from its
    /// top, decoding and dropping what comes before; tests compare the two).
    package var seeksToTrims = true
    /// Whether packets of pictures the output will not show and nothing references are left
    /// undecoded (false: every packet is decoded; tests compare the two).
    package var skipsUnshownPictures = true
    /// The video decoders' thread count in place of the cores' (VMERGE_TEST_DECODER_THREADS):
    /// a 2-core machine decodes as a 16-core one would, so tests can show the bytes do not change.
    package var decoderThreads: Int32?
    /// Uploads to a bucket go multipart past this many bytes, in parts of it (S3's smallest part
    /// is 5 MiB): a test's small output is uploaded in parts, and can be killed between two.
    package var uploadPartBytes: Int64?
    /// Seconds a worker holds the events it took to send (the queue's default: 120).
    package var eventLeaseSeconds: Double?
    /// Seconds between `job.progress` events (30: the "at most every 30 s"), so a test's
    /// short merge sends several.
    package var progressEventSeconds: Double?

    package init() {}
}

/// What the FFmpeg build in use can do, where builds differ: decided once per run, before the
/// plan, so the plan and the warnings agree.
package struct Capabilities: Sendable, Equatable {
    /// The filters HDR tone mapping needs that the build lacks (zscale comes with libzimg, which
    /// some builds leave out); empty: it can tone-map.
    package var missingToneMapFilters: [String] = []

    package var canToneMap: Bool { missingToneMapFilters.isEmpty }

    /// Everything vmerge can use is there.
    package static let full = Capabilities()

    package init(missingToneMapFilters: [String] = []) {
        self.missingToneMapFilters = missingToneMapFilters
    }
}
