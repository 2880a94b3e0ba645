import Foundation
import XCTest

/// Headless Chromium, driven over the Chrome DevTools Protocol on a pipe
/// (`--remote-debugging-pipe`: the browser reads commands on its fd 3 and writes replies and events
/// on its fd 4, each a JSON text ended by a NUL byte), so no WebSocket client is needed.
///
/// One thread does everything: a command is written, then messages are read until its reply comes,
/// and the events read on the way are recorded for their page (`BrowserPage`). A dialog is answered
/// as soon as it is read (an open dialog holds the page's script, and so the reply being waited
/// for). A browser that does not answer in time is killed, with its whole process group: a test
/// fails, it never hangs.
final class Browser {
    /// Seconds from spawning the browser to its first answer.
    private(set) var startup: TimeInterval = 0
    /// Its own output (stdout and stderr), in its temporary folder.
    var log: String { (try? String(contentsOfFile: folder + "/chromium.log", encoding: .utf8)) ?? "" }

    private let folder: String
    private var pid: pid_t = 0
    private var commands: Int32 = -1
    private var replies: Int32 = -1
    private var unread: [UInt8] = []
    private var lastID = 0
    private var pages: [String: BrowserPage.Records] = [:]

    /// The browser's program: `VMERGE_CHROMIUM`; else chromium, chromium-browser or google-chrome on
    /// PATH; else Chromium's or Google Chrome's app on macOS.
    static func program() -> String? {
        let environment = ProcessInfo.processInfo.environment
        if let program = environment["VMERGE_CHROMIUM"], !program.isEmpty { return program }
        let folders = (environment["PATH"] ?? "").split(separator: ":").map(String.init)
        for name in ["chromium", "chromium-browser", "google-chrome"] {
            for folder in folders where FileManager.default.isExecutableFile(atPath: folder + "/" + name) {
                return folder + "/" + name
            }
        }
        return [
            "/Applications/Chromium.app/Contents/MacOS/Chromium",
            "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
        ].first(where: FileManager.default.isExecutableFile)
    }

    /// A running browser. Without one the test is skipped, except under CI (`CI` set) or with
    /// `VMERGE_REQUIRE_TOOLS=1`, where that fails.
    static func launch() throws -> Browser {
        guard let program = program() else {
            let message =
                "no Chromium: install chromium (scripts/install-deps.sh), or set VMERGE_CHROMIUM to a Chromium or Chrome"
            let environment = ProcessInfo.processInfo.environment
            if environment["CI"]?.isEmpty == false || environment["VMERGE_REQUIRE_TOOLS"] == "1" {
                throw Failure(message)
            }
            throw XCTSkip(message)
        }
        return try Browser(program: program)
    }

    /// Starts `program` headless, offline and quiet, with a new profile in a temporary folder;
    /// returns once it answers.
    init(program: String, timeout: TimeInterval = 30) throws {
        var template = Array((FileManager.default.temporaryDirectory.path + "/vmerge-chromium.XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw Failure("cannot make a folder for the browser's profile") }
        folder = String(cString: made)
        let started = Date()
        do {
            try spawn(program)
            let version = try send("Browser.getVersion", timeout: timeout)
            guard version["product"] is String else { throw Failure("Browser.getVersion answered \(version)") }
        } catch {
            close()
            throw error
        }
        startup = Date().timeIntervalSince(started)
    }

    deinit { close() }

    /// The window's size, and so every page's and every screenshot's, in CSS pixels.
    static let size = (width: 1280, height: 900)

    static let arguments = [
        "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
        "--remote-debugging-pipe", "--window-size=\(size.width),\(size.height)", "--hide-scrollbars", "--mute-audio",
        // Offline and quiet: nothing fetched, reported or synced behind the tests' back.
        "--disable-background-networking", "--disable-component-update", "--disable-default-apps",
        "--disable-extensions", "--disable-sync", "--disable-breakpad", "--disable-crash-reporter",
        "--disable-domain-reliability", "--disable-client-side-phishing-detection", "--no-pings",
        "--metrics-recording-only", "--password-store=basic", "--use-mock-keychain",
        "--disable-features=Translate,MediaRouter,OptimizationHints,AutofillServerCommunication",
        // Containers give /dev/shm 64 MB, too little for the renderer.
        "--disable-dev-shm-usage",
    ]

    /// Spawns the browser in a process group of its own (so its helpers die with it), its fd 3
    /// and 4 the pipes' ends. Foundation's Process cannot hand a child descriptors beyond 0-2.
    private func spawn(_ program: String) throws {
        let (childReads, parentWrites) = try Browser.makePipe()
        let (parentReads, childWrites) = try Browser.makePipe()
        commands = parentWrites
        replies = parentReads
        defer {
            closeDescriptor(childReads)
            closeDescriptor(childWrites)
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, folder + "/chromium.log", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        posix_spawn_file_actions_adddup2(&actions, childReads, 3)
        posix_spawn_file_actions_adddup2(&actions, childWrites, 4)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP))
        posix_spawnattr_setpgroup(&attributes, 0)
        let command = [program] + Browser.arguments + ["--user-data-dir=" + folder + "/profile", "about:blank"]
        var argv = command.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let status = posix_spawn(&pid, program, &actions, &attributes, &argv, environ)
        guard status == 0 else { throw Failure("cannot start \(program): \(String(cString: strerror(status)))") }
        // A browser that dies while a command is written is an error to report, not SIGPIPE.
        signal(SIGPIPE, SIG_IGN)
    }

    /// A pipe whose ends are close-on-exec (other children must not hold them) and above 4 (dup2
    /// onto the same number would keep close-on-exec in the browser).
    private static func makePipe() throws -> (read: Int32, write: Int32) {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw Failure("pipe: \(String(cString: strerror(errno)))") }
        let moved = ends.map { end -> Int32 in
            let high = fcntl(end, F_DUPFD_CLOEXEC, 10)
            closeDescriptor(end)
            return high
        }
        guard moved.allSatisfy({ $0 >= 0 }) else { throw Failure("fcntl: \(String(cString: strerror(errno)))") }
        return (moved[0], moved[1])
    }

    /// Sends a command (to a page's session, or to the browser) and waits for its reply; the
    /// reply's `result`. The browser's error answer is thrown; a browser silent for `timeout` is
    /// killed and that is thrown.
    @discardableResult
    func send(_ method: String, _ parameters: [String: Any] = [:], session: String? = nil, timeout: TimeInterval = 30)
        throws -> [String: Any]
    {
        let id = try post(method, parameters, session: session)
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            guard let message = try readMessage(until: deadline) else {
                close()
                throw Failure("Chromium did not answer \(method) in \(timeout) s; killed it. Its log:\n\(log)")
            }
            if message["id"] as? Int == id {
                if let error = message["error"] as? [String: Any] {
                    throw Failure("\(method): \(error["message"] ?? error)")
                }
                return message["result"] as? [String: Any] ?? [:]
            }
            handle(message)
        }
    }

    /// Writes a command without waiting for its reply; its id.
    private func post(_ method: String, _ parameters: [String: Any], session: String?) throws -> Int {
        guard pid > 0 else { throw Failure("the browser is closed") }
        lastID += 1
        var message: [String: Any] = ["id": lastID, "method": method, "params": parameters]
        if let session { message["sessionId"] = session }
        var bytes = [UInt8](try JSONSerialization.data(withJSONObject: message)) + [0]
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeMutableBytes { write(commands, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { throw Failure("cannot write to the browser (\(method)): it has gone. \(log)") }
            offset += written
        }
        return lastID
    }

    /// Reads and records one event, waiting for it until `deadline` (for waits that watch a
    /// page's records); whether one came.
    func pump(until deadline: Date) throws -> Bool {
        guard let message = try readMessage(until: deadline) else { return false }
        handle(message)
        return true
    }

    /// The next whole message, or nil once `deadline` has passed without one.
    private func readMessage(until deadline: Date) throws -> [String: Any]? {
        while true {
            if let end = unread.firstIndex(of: 0) {
                let text = Data(unread[..<end])
                unread.removeSubrange(...end)
                guard let message = try JSONSerialization.jsonObject(with: text) as? [String: Any] else {
                    throw Failure("the browser sent a message that is not an object")
                }
                return message
            }
            let left = deadline.timeIntervalSinceNow
            guard left > 0, replies >= 0 else { return nil }
            var ready = pollfd(fd: replies, events: Int16(POLLIN), revents: 0)
            let polled = poll(&ready, 1, Int32(min(left * 1000, 1000).rounded(.up)))
            if polled < 0 && errno != EINTR { throw Failure("poll: \(String(cString: strerror(errno)))") }
            guard polled > 0 else { continue }
            var chunk = [UInt8](repeating: 0, count: 1 << 16)
            let count = read(replies, &chunk, chunk.count)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw Failure("the browser closed its pipe (it exited). Its log:\n\(log)") }
            unread += chunk[..<count]
        }
    }

    /// Records an event for its page; answers a dialog at once (accepting it), so the page runs on.
    private func handle(_ message: [String: Any]) {
        guard let method = message["method"] as? String, let session = message["sessionId"] as? String,
            let records = pages[session]
        else { return }
        let parameters = message["params"] as? [String: Any] ?? [:]
        if method == "Page.javascriptDialogOpening" {
            _ = try? post("Page.handleJavaScriptDialog", ["accept": true], session: session)
        }
        records.record(method, parameters)
    }

    /// A new tab, its events recorded from the start.
    func newPage() throws -> BrowserPage {
        let target = try send("Target.createTarget", ["url": "about:blank"])
        guard let targetID = target["targetId"] as? String else { throw Failure("no targetId in \(target)") }
        let attached = try send("Target.attachToTarget", ["targetId": targetID, "flatten": true])
        guard let session = attached["sessionId"] as? String else { throw Failure("no sessionId in \(attached)") }
        let records = BrowserPage.Records()
        pages[session] = records
        for domain in ["Page", "Runtime", "Log"] { try send(domain + ".enable", session: session) }
        // The window's size is the viewport's only once the headless window's frame is taken off.
        try send(
            "Emulation.setDeviceMetricsOverride",
            ["width": Browser.size.width, "height": Browser.size.height, "deviceScaleFactor": 1, "mobile": false],
            session: session)
        return BrowserPage(browser: self, target: targetID, session: session, records: records)
    }

    func closePage(_ page: BrowserPage) {
        _ = try? send("Target.closeTarget", ["targetId": page.target], timeout: 10)
        pages[page.session] = nil
    }

    /// Asks the browser to quit, kills its process group if it has not within 5 s, and removes its
    /// folder. Safe to call twice.
    func close() {
        if pid > 0 {
            if commands >= 0, (try? post("Browser.close", [:], session: nil)) != nil {
                let deadline = Date().addingTimeInterval(5)
                while !exited() && Date() < deadline { usleep(20_000) }
            }
            // The helpers (zygote, renderers) share its group; the group is gone once all have exited.
            kill(-pid, SIGKILL)
            while !exited() { usleep(10_000) }
            let deadline = Date().addingTimeInterval(2)
            while kill(-pid, 0) == 0 && Date() < deadline { usleep(10_000) }
            pid = 0
        }
        for end in [commands, replies] where end >= 0 { closeDescriptor(end) }
        (commands, replies) = (-1, -1)
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// Whether the browser's own process has exited (and is reaped).
    private func exited() -> Bool {
        var status: Int32 = 0
        let reaped = waitpid(pid, &status, WNOHANG)
        return reaped == pid || (reaped < 0 && errno == ECHILD)
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}

/// close(2), under a name that Browser's own `close()` does not hide.
private func closeDescriptor(_ descriptor: Int32) { _ = close(descriptor) }
