import Foundation
import TestSupport
import XCTest

/// A private https server for the tests: nginx on 127.0.0.1, its certificate (for 127.0.0.1,
/// 127.0.0.2 and localhost) signed by a CA made for this server alone, so a client trusts it only
/// when given `caFile`. It serves `folder` (byte ranges and ETags: nginx's static files), and:
///   /redirect-here/X       302 to https://127.0.0.1:PORT/X (the same host)
///   /redirect-elsewhere/X  302 to https://localhost:PORT/X (the same server under another name)
///   /redirect-away/X       302 to https://127.0.0.2:PORT/X (another address; served too on Linux)
///   /unavailable/X         503 with Retry-After: 1
///
/// Everything it writes (keys, configuration, logs, nginx's temporary files, its pid) is in a
/// temporary folder of its own, so it runs as root or not without touching /var.
final class HTTPSTestServer {
    let baseURL: URL
    let port: UInt16
    /// The CA's certificate (PEM): what a client must trust to reach this server.
    let caFile: String
    /// What the server serves; the tests put their files here.
    let folder: URL
    private let work: URL
    private let server: ChildServer

    /// nginx: VMERGE_NGINX, else Debian's /usr/sbin/nginx, else on PATH (Homebrew's).
    static var nginx: String? {
        let environment = ProcessInfo.processInfo.environment
        if let named = environment["VMERGE_NGINX"], !named.isEmpty { return named }
        let onPath = (environment["PATH"] ?? "").split(separator: ":").map { "\($0)/nginx" }
        return (["/usr/sbin/nginx"] + onPath).first(where: FileManager.default.isExecutableFile)
    }

    /// openssl: Homebrew's OpenSSL 3 on macOS (the system's is LibreSSL), else on PATH.
    static var openssl: String? {
        let environment = ProcessInfo.processInfo.environment
        let onPath = (environment["PATH"] ?? "").split(separator: ":").map { "\($0)/openssl" }
        return (["/opt/homebrew/opt/openssl@3/bin/openssl", "/usr/local/opt/openssl@3/bin/openssl"] + onPath)
            .first(where: FileManager.default.isExecutableFile)
    }

    /// Makes the CA and the certificate, starts nginx and waits (10 s at most) until it accepts
    /// connections. `serving` is the folder to serve; a new empty one when nil.
    init(serving: URL? = nil) throws {
        guard let nginx = HTTPSTestServer.nginx else {
            throw missingTool("nginx is not installed (Debian: nginx-light; make deps installs it)")
        }
        guard let openssl = HTTPSTestServer.openssl else {
            throw missingTool("openssl is not installed (make deps installs it)")
        }
        work = try makeTemporaryFolder("vmerge-https")
        folder = serving ?? work.appendingPathComponent("site")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(
            at: work.appendingPathComponent("temp"), withIntermediateDirectories: true)
        caFile = work.appendingPathComponent("ca.pem").path
        try HTTPSTestServer.makeCertificates(in: work, openssl: openssl)
        // The port was free a moment ago; another process may take it first: then another.
        var attempt = 0
        while true {
            attempt += 1
            let port = try freeLocalPort()
            if let started = try HTTPSTestServer.start(nginx, port: port, work: work, folder: folder) {
                self.port = port
                server = started
                break
            }
            guard attempt < 3 else {
                let log = (try? String(contentsOf: work.appendingPathComponent("error.log"), encoding: .utf8)) ?? ""
                try? FileManager.default.removeItem(at: work)
                throw RemoteTestError("nginx did not start: \(log)")
            }
        }
        baseURL = URL(string: "https://127.0.0.1:\(port)")!
    }

    deinit { stop() }

    /// Stops nginx and removes its folder (the served one too when it was the server's own).
    func stop() {
        server.stop()
        try? FileManager.default.removeItem(at: work)
    }

    /// nginx's error log (what it refused and why), for failure messages.
    var errorLog: String {
        (try? String(contentsOf: work.appendingPathComponent("error.log"), encoding: .utf8)) ?? ""
    }

    /// The address of a file served under `path`.
    func url(_ path: String) -> URL { baseURL.appendingPathComponent(path) }

    /// The server's certificate and key (for 127.0.0.1 and localhost, signed by `caFile`), for
    /// another test server to use.
    var certificate: (cert: String, key: String) {
        (work.appendingPathComponent("server.pem").path, work.appendingPathComponent("server.key").path)
    }

    /// Each answer to a GET under /no-ranges/ (a server that ignores Range): its status and the
    /// body bytes it sent.
    func noRangesLog() throws -> [(status: Int, sent: Int)] {
        let text = (try? String(contentsOf: work.appendingPathComponent("no-ranges.log"), encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ")
            guard fields.count == 3, fields[0] == "GET", let status = Int(fields[1]), let sent = Int(fields[2])
            else { return nil }
            return (status, sent)
        }
    }

    /// A CA (EC P-256: made in milliseconds, where RSA keys take their time) and the server's key
    /// and certificate, signed by it, for the names the tests use.
    private static func makeCertificates(in work: URL, openssl: String) throws {
        let path = { (name: String) in work.appendingPathComponent(name).path }
        let extensions = """
            subjectAltName = IP:127.0.0.1, IP:127.0.0.2, DNS:localhost
            basicConstraints = critical, CA:FALSE
            keyUsage = critical, digitalSignature
            extendedKeyUsage = serverAuth

            """
        try Data(extensions.utf8).write(to: work.appendingPathComponent("server.ext"))
        let curve = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        let steps: [[String]] = [
            ["req", "-x509"] + curve + [
                "-keyout", path("ca.key"), "-out", path("ca.pem"), "-days", "2", "-subj", "/CN=vmerge test CA",
                "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
            ],
            ["req", "-new"] + curve + [
                "-keyout", path("server.key"), "-out", path("server.csr"), "-subj", "/CN=localhost",
            ],
            [
                "x509", "-req", "-in", path("server.csr"), "-CA", path("ca.pem"), "-CAkey", path("ca.key"),
                "-CAcreateserial", "-out", path("server.pem"), "-days", "2", "-extfile", path("server.ext"),
            ],
        ]
        for step in steps {
            let result = try runTool(openssl, step)
            guard result.status == 0 else {
                throw RemoteTestError("openssl \(step.joined(separator: " ")): \(result.output)")
            }
        }
    }

    /// Starts nginx on `port`; nil when it exits at once (the port was taken meanwhile).
    private static func start(_ nginx: String, port: UInt16, work: URL, folder: URL) throws -> ChildServer? {
        let configuration = work.appendingPathComponent("nginx.conf")
        try Data(nginxConfiguration(port: port, work: work.path, folder: folder.path).utf8).write(to: configuration)
        // nginx in the foreground, behind a shell that stops it when its stdin closes (the test's
        // end): nginx itself does not watch its stdin. -e: its log before it reads the
        // configuration, which would otherwise be /var/log/nginx's.
        let watcher = #""$0" "$@" </dev/null & server=$!; cat >/dev/null; kill "$server"; wait "$server""#
        let arguments =
            ["-c", watcher, nginx, "-p", work.path + "/", "-c", configuration.path, "-e", work.path + "/error.log"]
        let server = try ChildServer("/bin/sh", arguments, log: work.appendingPathComponent("nginx.out"))
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if FileManager.default.fileExists(atPath: work.path + "/nginx.pid"), canConnect(port: port) {
                return server
            }
            // The shell outlives an nginx that gave up (the port taken meanwhile): its log says so.
            let log = (try? String(contentsOf: work.appendingPathComponent("error.log"), encoding: .utf8)) ?? ""
            if log.contains("[emerg]") || !server.process.isRunning {
                server.stop()
                return nil
            }
            usleep(20_000)
        }
        server.stop()
        return nil
    }

    private static func nginxConfiguration(port: UInt16, work: String, folder: String) -> String {
        #if os(Linux)
            // All of 127.0.0.0/8 is this machine's on Linux: a client that follows the redirect away
            // gets an answer, so the test can tell it did. macOS has 127.0.0.1 alone.
            let away = "listen 127.0.0.2:\(port) ssl;"
        #else
            let away = ""
        #endif
        return """
            daemon off;
            master_process off;
            worker_processes 1;
            pid \(work)/nginx.pid;
            error_log \(work)/error.log info;
            events { worker_connections 64; }
            http {
                access_log \(work)/access.log;
                client_body_temp_path \(work)/temp/body;
                proxy_temp_path \(work)/temp/proxy;
                fastcgi_temp_path \(work)/temp/fastcgi;
                uwsgi_temp_path \(work)/temp/uwsgi;
                scgi_temp_path \(work)/temp/scgi;
                default_type application/octet-stream;
                log_format sent '$request_method $status $body_bytes_sent';
                server {
                    listen 127.0.0.1:\(port) ssl;
                    \(away)
                    ssl_certificate \(work)/server.pem;
                    ssl_certificate_key \(work)/server.key;
                    root \(folder);
                    location ~ ^/redirect-here/(.*)$ { return 302 https://127.0.0.1:\(port)/$1$is_args$args; }
                    location ~ ^/redirect-elsewhere/(.*)$ { return 302 https://localhost:\(port)/$1$is_args$args; }
                    location ~ ^/redirect-away/(.*)$ { return 302 https://127.0.0.2:\(port)/$1$is_args$args; }
                    location /unavailable/ { add_header Retry-After 1 always; return 503; }
                    location /no-ranges/ { max_ranges 0; access_log \(work)/no-ranges.log sent; }
                }
            }

            """
    }

    /// Whether something accepts TCP connections on 127.0.0.1:port.
    private static func canConnect(port: UInt16) -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }
}

/// Runs a tool to its end; its exit status and its stdout and stderr together.
func runTool(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.standardInput = FileHandle.nullDevice
    let output = Pipe()
    process.standardOutput = output
    process.standardError = output
    try process.run()
    let said = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    return (process.terminationStatus, said)
}

/// Tests against a real https server: one per test class (started by its first test, stopped when
/// the class is done), serving a folder of its own that the tests write into.
class HTTPSTestCase: XCTestCase {
    nonisolated(unsafe) private static var servers: [ObjectIdentifier: HTTPSTestServer] = [:]

    var https: HTTPSTestServer!

    override func setUpWithError() throws {
        try super.setUpWithError()
        let key = ObjectIdentifier(type(of: self))
        if HTTPSTestCase.servers[key] == nil { HTTPSTestCase.servers[key] = try HTTPSTestServer() }
        https = HTTPSTestCase.servers[key]
    }

    override class func tearDown() {
        servers.removeValue(forKey: ObjectIdentifier(self))?.stop()
        super.tearDown()
    }
}
