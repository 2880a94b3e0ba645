import VMergeCore

/// Environment variables that exist for vmerge's own tests: read here, once per run, and handed
/// to the library in the merge options (the library never reads the environment).
struct TestHooks: Equatable {
    /// VMERGE_TEST_HIDE_FILTERS=zscale[,tonemap]: filters to treat as missing from FFmpeg, so a
    /// full build takes the path of a build without them.
    var hiddenFilters: Set<String>

    /// VMERGE_TEST_KILL_AT=<point>: the process kills itself there (see `CrashPoint`).
    var killPoint: String?

    init(environment: [String: String]) {
        hiddenFilters = Set((environment["VMERGE_TEST_HIDE_FILTERS"] ?? "").split(separator: ",").map(String.init))
        killPoint = environment["VMERGE_TEST_KILL_AT"]
    }

    /// `command` with the hooks in the options of every merge it runs (a batch's or a watch's
    /// jobs read their own options over the run-wide ones, and so inherit them).
    func applied(to command: Command) -> Command {
        switch command {
        case var .merge(request):
            request.options.hiddenFilters = hiddenFilters
            return .merge(request)
        case var .batch(request):
            request.settings.merge.hiddenFilters = hiddenFilters
            return .batch(request)
        case var .watch(request):
            request.watch.settings.merge.hiddenFilters = hiddenFilters
            return .watch(request)
        case var .worker(request):
            request.hiddenFilters = hiddenFilters
            return .worker(request)
        case .help, .version, .subcommandHelp, .manPage, .completion, .queue:
            return command
        }
    }
}
