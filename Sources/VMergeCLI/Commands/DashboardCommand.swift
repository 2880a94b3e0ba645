import Foundation
import VMergeAV
import VMergeCore
import VMergeWeb

/// `vmerge dashboard`: serves the queue's page and Prometheus metrics until SIGINT/SIGTERM.
struct DashboardCommand: CommandSpec {
    static let configuration = CommandConfiguration(
        name: "dashboard", abstract: "Serve a web page and Prometheus metrics over the queue",
        overview: "Serve a web page over the queue ('vmerge queue') and its metrics for Prometheus at /metrics, "
            + "until SIGINT/SIGTERM. Both are read from the database at each request; a database that cannot be "
            + "read within 3 s shows as such (vmerge_database_up 0) and the server goes on. The page also shows "
            + "the watch folders whose status files --watch names. It updates itself every 2 s (without scripts, it "
            + "reloads every 10 s). It only reads unless --token-file is given: then a browser signed in with the "
            + "token can retry and cancel jobs and pause and resume the queue.",
        usage: "vmerge dashboard [--db <url>] [--watch <path>]... [--listen <address:port>]... [--token-file <file>] "
            + "[--api-tokens <file>] [--allow-inputs <dir>]... [--allow-outputs <dir>]... [--allow-remote <prefix>]... "
            + "[options]",
        examples: [
            Help.Example(command: "vmerge dashboard --db postgresql:///vmerge", note: "http://127.0.0.1:8080/"),
            Help.Example(
                command: "vmerge dashboard --watch /run/vmerge-watch-trips/status.json", note: "watch folders only"),
            Help.Example(command: "curl -s http://127.0.0.1:8080/metrics"),
            Help.Example(
                command: "vmerge dashboard --db postgresql:///vmerge --listen 127.0.0.1:8080 "
                    + "--listen unix:/run/vmerge/dashboard.sock",
                note: "and a Unix socket, its owner's only"),
            Help.Example(command: "curl -s --unix-socket /run/vmerge/dashboard.sock http://localhost/metrics"),
            Help.Example(
                command: "(umask 077; head -c 24 /dev/urandom | base64 > ~/.vmerge-token); "
                    + "vmerge dashboard --token-file ~/.vmerge-token",
                note: "actions on"),
            Help.Example(
                command: "curl -s -X POST -H \"Authorization: Bearer $(cat ~/.vmerge-token)\" "
                    + "http://127.0.0.1:8080/jobs/12/retry"),
        ],
        exits: .dashboard, positionals: .none,
        mainHelpExample: "vmerge dashboard --db postgresql:///vmerge")
    static let defaultListen = "127.0.0.1:8080"

    static let watch = CommandOption.repeated(
        "watch", value: "path",
        help: "Show a watcher's status file (vmerge watch --status-file), or every status file in this "
            + "folder (repeatable). With --watch, --db may be left out: a page of watch folders only.",
        kind: .file)
    static let listen = CommandOption.repeated(
        "listen", value: "address:port",
        help: "Where to serve (repeatable): a numeric IPv4 address and port, or [IPv6]:port; port 0 takes a free "
            + "one (the line on stderr says which). Any address but loopback lets other machines read the queue. "
            + "Every loopback client shares one budget of connections; unix:PATH serves on a Unix socket as well, "
            + "a door of its own that the socket's permissions keep (made 0600, removed on exit; an existing "
            + "file is never replaced). (default: \(DashboardCommand.defaultListen))"
    ).map { texts, spec in
        try (texts.isEmpty ? [DashboardCommand.defaultListen] : texts).map {
            try SharedOptions.listenAddress($0, option: spec.long, unixSockets: true)
        }
    }
    static let tokenFile = CommandOption.text(
        "token-file", value: "file",
        help: "Turns the page's actions on (retry, cancel, pause, resume): a browser signs in with the token this file "
            + "holds (16 characters at least), and a script sends it as 'Authorization: Bearer'. Without it "
            + "the page only reads.", empty: "missing file name for '--token-file'")
    static let apiTokens = CommandOption.text(
        "api-tokens", value: "file",
        help: "Named tokens for the job API (/api/v1/), one a line: NAME SCOPES TOKEN, scopes read, submit and "
            + "operate comma-separated. --token-file's token has every scope.",
        empty: "missing file name for '--api-tokens'")
    static let allowInputs = folders(
        "allow-inputs",
        help: "Jobs submitted over the API may read files in this folder and below it, reached "
            + "without following a link out of it (absolute; repeatable). Without it they read objects only.")
    static let allowOutputs = folders(
        "allow-outputs",
        help: "Jobs submitted over the API may write their output (and poster) directly in this "
            + "folder (absolute; repeatable). Without it they write to buckets only.")
    static let maxQueued = CommandOption.integer(
        "max-queued", help: "Answer a submission 429 (Retry-After) while this many jobs wait in the queue.",
        in: 1...100_000_000)
    static let maxAttempts = CommandOption.integer(
        "max-attempts",
        help: "How many times a worker may try each job submitted over the API. "
            + "(default: \(QueueCommand.defaultMaxAttempts))", in: 1...100)
    static let connectionsPerClient = CommandOption.integer(
        "connections-per-client",
        help: "Connections one client may hold at once; a client is an address, and every loopback address (a "
            + "reverse proxy on this machine) is one. (default: \(HTTPServer.Limits().perAddress))",
        in: 1...1024)
    static let quiet = CommandOption.flag("quiet", short: "q", help: "Print only errors and warnings.")

    static let table: [OptionSpec] = [
        SharedOptions.database.spec, watch.spec, listen.spec, tokenFile.spec, apiTokens.spec, allowInputs.spec,
        allowOutputs.spec, SharedOptions.allowRemote.spec, maxQueued.spec, maxAttempts.spec, connectionsPerClient.spec,
        quiet.spec,
        SharedOptions.help.spec,
    ]

    /// A repeatable absolute folder that is there, as a root of the API's jobs.
    private static func folders(_ long: String, help: String) -> CommandOption<[String]> {
        CommandOption.repeated(long, value: "dir", help: help, kind: .directory).map { folders, spec in
            try folders.map { folder in
                var info = stat()
                guard let root = SubmissionPolicy.root(folder), POSIX.stat(FileName(root), &info) == 0,
                    (info.st_mode & S_IFMT) == S_IFDIR
                else {
                    throw UsageError.invalidValue(folder, for: spec.long, expected: "an absolute path of a folder")
                }
                return root
            }
        }
    }

    /// --db; nil: VMERGE_DB.
    var database: String?
    /// --watch: status files, or folders of them.
    var watch: [String]
    var listen: [ListenAddress]
    /// Where the actions' token is; nil: actions off.
    var tokenFile: String?
    /// The API's named tokens.
    var apiTokens: String?
    /// What jobs submitted over the API may name.
    var policy = SubmissionPolicy()
    var verbosity: Verbosity
    /// The server's limits (--connections-per-client).
    var limits = HTTPServer.Limits()

    init(_ parsed: ParsedArguments) throws {
        if let extra = parsed.positionals.first {
            throw UsageError(description: "dashboard: unexpected argument '\(extra)'")
        }
        verbosity = try DashboardCommand.quiet.read(parsed) ? .quiet : .normal
        database = try SharedOptions.database.read(parsed)
        watch = try DashboardCommand.watch.read(parsed)
        if watch.contains("") { throw UsageError(description: "missing file or folder name for '--watch'") }
        tokenFile = try DashboardCommand.tokenFile.read(parsed)
        apiTokens = try DashboardCommand.apiTokens.read(parsed)
        policy.inputRoots = try DashboardCommand.allowInputs.read(parsed)
        policy.outputRoots = try DashboardCommand.allowOutputs.read(parsed)
        policy.remote = try SharedOptions.remoteAccess(parsed, listingRequired: true)
        policy.maxQueued = try DashboardCommand.maxQueued.read(parsed)
        if let count = try DashboardCommand.connectionsPerClient.read(parsed) { limits.perAddress = UInt32(count) }
        policy.maxAttempts = try DashboardCommand.maxAttempts.read(parsed) ?? QueueCommand.defaultMaxAttempts
        listen = try DashboardCommand.listen.read(parsed)
    }

    func run(console: Console, printer: MessagePrinter) throws -> Exit {
        // Watch folders alone need no database; VMERGE_DB, when set, still adds the queue.
        let conninfo =
            watch.isEmpty || database != nil || !(console.environment["VMERGE_DB"] ?? "").isEmpty
            ? try SharedOptions.conninfo(database, command: "dashboard", console: console, printer: printer) : nil
        let access = ActionAccess(
            token: try tokenFile.map(ActionAccess.token(fromFile:)),
            apiTokens: try apiTokens.map(APITokens.read) ?? APITokens())
        var info = stat()
        if let tokenFile, POSIX.stat(FileName(tokenFile), &info) == 0, info.st_mode & S_IROTH != 0 {
            printer.print(
                .warning, file: tokenFile,
                "warning: every user of this machine can read the token: chmod 600 it (640 for a group)",
                evenIfQuiet: true)
        }
        for address in listen where !address.isLocal {
            let acting =
                access.enabled
                ? "; the token and the session cookie travel unencrypted unless a TLS proxy stands in front"
                : ", and nothing asks them for a token"
            printer.print(
                .warning, file: nil,
                "dashboard: \(address) can be reached from other machines\(acting): anyone who can connect reads the "
                    + "queue's job names and errors",
                evenIfQuiet: true)
        }
        let reader = conninfo.map { conninfo in queueReader(conninfo, printer: printer) }
        let site = DashboardSite(reader: reader, watch: WatchStatusSource(paths: watch), access: access, policy: policy)
        // One server per address, each with its own connections; a Unix socket's server removes
        // its socket when stopped, here or (an address after it cannot listen) as the throw
        // unwinds.
        var servers: [HTTPServer] = []
        defer { for server in servers { server.stop() } }
        for address in listen {
            let server = try HTTPServer(listening: address, limits: limits, handler: site)
            servers.append(server)
            let actions =
                (access.enabled ? "; actions on" : "") + (access.apiEnabled && reader != nil ? "; API at /api/v1/" : "")
            printer.sink("dashboard")("serving \(server.address.url) (metrics at /metrics\(actions))")
        }
        // The signal handler only records the signal (VMergeProcess); the servers run on their own threads.
        while VMergeProcess.pendingSignal == 0 { usleep(100_000) }
        for server in servers { server.stop() }
        printer.sink("dashboard")("stopped\(VMergeProcess.stopNote)")
        return .success
    }

    /// The queue's reader, which says once when the database goes away and once when it is back.
    private func queueReader(_ conninfo: String, printer: MessagePrinter) -> QueueReader {
        let log = printer.sink("dashboard")
        return QueueReader(conninfo: conninfo) { problem in
            if let problem {
                log.warning("the database cannot be read: \(problem)")
            } else {
                log("the database answers again")
            }
        }
    }
}
