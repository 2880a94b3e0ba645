import Foundation
import VMergeQueue
import XCTest

/// A private PostgreSQL cluster for the tests: initdb into a fresh /tmp/vmpg.XXXXXX (short: a Unix
/// socket's path must fit in ~107 bytes), served on a Unix socket in that folder only (no TCP),
/// without fsync. PostgreSQL refuses to run as root, so as root (CI here) every server program
/// runs as the `postgres` user, which owns the folder.
///
/// Without the server programs the tests are skipped, except in CI (`CI` set), where that fails.
final class PostgresServer {
    let folder: String
    private let bin: String
    private var running = false

    var data: String { folder + "/data" }
    /// How the tests connect: the socket's folder, as libpq reads a host starting with "/".
    var conninfo: String { "host=\(folder) dbname=postgres user=postgres" }

    /// The server programs' folder: VMERGE_PG_BINDIR; else the newest of Debian's
    /// /usr/lib/postgresql/<version>/bin (off PATH; `pg_config --bindir` there names the client's)
    /// and Homebrew's postgresql@<version>; else initdb on PATH.
    static func binaries() -> String? {
        let environment = ProcessInfo.processInfo.environment
        let has = { (folder: String) in FileManager.default.isExecutableFile(atPath: folder + "/initdb") }
        if let folder = environment["VMERGE_PG_BINDIR"], !folder.isEmpty { return has(folder) ? folder : nil }
        var versioned: [(Int, String)] = []
        let debian = "/usr/lib/postgresql"
        for name in (try? FileManager.default.contentsOfDirectory(atPath: debian)) ?? [] {
            if let version = Int(name), has("\(debian)/\(name)/bin") {
                versioned.append((version, "\(debian)/\(name)/bin"))
            }
        }
        for prefix in ["/opt/homebrew/opt", "/usr/local/opt"] {
            for name in (try? FileManager.default.contentsOfDirectory(atPath: prefix)) ?? []
            where name.hasPrefix("postgresql@") {
                if let version = Int(name.dropFirst("postgresql@".count)), has("\(prefix)/\(name)/bin") {
                    versioned.append((version, "\(prefix)/\(name)/bin"))
                }
            }
        }
        if let newest = versioned.max(by: { $0.0 < $1.0 }) { return newest.1 }
        for folder in (environment["PATH"] ?? "").split(separator: ":").map(String.init) where has(folder) {
            return folder
        }
        return nil
    }

    /// Makes and starts a new cluster; skips the test when there is no server to run.
    init() throws {
        guard let bin = PostgresServer.binaries() else {
            let message = "no PostgreSQL server programs (initdb): install postgresql, or set VMERGE_PG_BINDIR"
            if ProcessInfo.processInfo.environment["CI"]?.isEmpty == false { throw ServerError(message) }
            throw XCTSkip(message)
        }
        self.bin = bin
        var template = Array("/tmp/vmpg.XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw ServerError("cannot make a folder in /tmp") }
        folder = String(cString: made)
        if geteuid() == 0 {
            guard let user = getpwnam("postgres") else {
                throw ServerError("running as root, and there is no postgres user to run the server as")
            }
            guard chown(folder, user.pointee.pw_uid, user.pointee.pw_gid) == 0 else {
                throw ServerError("cannot give \(folder) to the postgres user")
            }
        }
        try run("initdb", ["-D", data, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8", "--no-locale"])
        try start()
    }

    deinit { close() }

    func start() throws {
        // -w: pg_ctl returns once the server accepts connections (or gave up).
        try run(
            "pg_ctl",
            [
                "-D", data, "-l", folder + "/server.log", "-w", "-t", "60",
                "-o", "-k \(folder) -c listen_addresses='' -c fsync=off -c full_page_writes=off", "start",
            ])
        running = true
        let deadline = Date().addingTimeInterval(30)
        while (try? run("pg_isready", ["-q", "-h", folder, "-d", "postgres", "-U", "postgres"])) == nil {
            guard Date() < deadline else { throw ServerError("the server did not become ready: \(log)") }
            Thread.sleep(forTimeInterval: 0.1)
        }
    }

    /// Stops the server at once (clients are cut off, as when a database host goes down).
    func stop() throws {
        guard running else { return }
        try run("pg_ctl", ["-D", data, "-m", "fast", "-w", "stop"])
        running = false
    }

    func restart() throws {
        try stop()
        try start()
    }

    /// Stops the server and removes its folder.
    func close() {
        try? stop()
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// A new, empty database on this server; its conninfo.
    func makeDatabase(_ name: String) throws -> String {
        try PGConnection(conninfo).execute("CREATE DATABASE \(name)")
        return "host=\(folder) dbname=\(name) user=postgres"
    }

    var log: String { (try? String(contentsOfFile: folder + "/server.log", encoding: .utf8)) ?? "" }

    /// Runs one of the server's programs (as postgres when root), its output into a file.
    /// posix_spawn, not Foundation's Process: Process learns of the exit through a descriptor the
    /// child inherits, and the server pg_ctl starts keeps it open, so it would wait forever.
    @discardableResult
    private func run(_ program: String, _ arguments: [String]) throws -> String {
        // In the folder: the postgres user may not enter the test's own working directory.
        var command = ["/bin/sh", "-c", #"cd "$0" && exec "$@""#, folder, bin + "/" + program] + arguments
        if geteuid() == 0 {
            if let runuser = ["/usr/sbin/runuser", "/sbin/runuser"].first(where: FileManager.default.isExecutableFile) {
                command = [runuser, "-u", "postgres", "--"] + command
            } else {
                let quoted = command.map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }
                command = ["/bin/su", "postgres", "-s", "/bin/sh", "-c", quoted.joined(separator: " ")]
            }
        }
        let outputPath = folder + "/\(program).out"
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let status = spawn(command, actions: &actions)
        let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        guard status == 0 else {
            throw ServerError("\(program) \(arguments.joined(separator: " ")) exited \(status): \(text)")
        }
        return text
    }

    /// Spawns `command` and waits for it; its exit status (-1 if it could not start).
    private func spawn(_ command: [String], actions: inout posix_spawn_file_actions_t) -> Int32 {
        var argv = command.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid = pid_t()
        guard posix_spawn(&pid, command[0], &actions, nil, &argv, environ) == 0 else { return -1 }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    }
}

struct ServerError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Tests against a real server: one cluster per test class (started by its first test, stopped
/// when the class is done), and a new database for each test.
class ServerTestCase: XCTestCase {
    nonisolated(unsafe) private static var servers: [ObjectIdentifier: PostgresServer] = [:]
    nonisolated(unsafe) private static var databases = 0

    var server: PostgresServer!
    /// This test's own, empty database.
    var database: String!

    override func setUpWithError() throws {
        try super.setUpWithError()
        let key = ObjectIdentifier(type(of: self))
        if ServerTestCase.servers[key] == nil { ServerTestCase.servers[key] = try PostgresServer() }
        server = ServerTestCase.servers[key]
        ServerTestCase.databases += 1
        database = try server.makeDatabase("test\(ServerTestCase.databases)")
    }

    override class func tearDown() {
        servers.removeValue(forKey: ObjectIdentifier(self))?.close()
        super.tearDown()
    }
}
