import Foundation
import TestSupport
import XCTest

/// The README's Deployment and Service for `vmerge dashboard`, read as a cluster reads them (parsed
/// as YAML) and run as its pod would run: the container's command as written, over a real queue,
/// with VMERGE_DB in the environment (the database Secret's) and the token where the Secret
/// volume puts it. No cluster runs here: the wiring between the objects is checked instead.
final class DashboardDeploymentTests: DashboardTestCase {

    private func manifests() throws -> [[String: Any]] { try readmeManifests() }

    private func at(_ object: Any?, _ path: Any...) -> Any? { follow(object, path) }

    func testTheDashboardDeploymentRunsAsWrittenBehindItsService() throws {
        let documents = try manifests()
        func object(_ kind: String) throws -> [String: Any] {
            try XCTUnwrap(
                documents.first {
                    $0["kind"] as? String == kind && at($0, "metadata", "name") as? String == "vmerge-dashboard"
                },
                "the README has no \(kind) vmerge-dashboard")
        }
        let deployment = try object("Deployment"), service = try object("Service")
        let pod = at(deployment, "spec", "template")
        let labels = try XCTUnwrap(at(pod, "metadata", "labels") as? [String: String])
        XCTAssertEqual(at(deployment, "spec", "selector", "matchLabels") as? [String: String], labels)
        XCTAssertEqual(at(deployment, "spec", "replicas") as? Int, 1, "sign-in sessions live in one process's memory")
        let container = try XCTUnwrap(at(pod, "spec", "containers", 0) as? [String: Any])
        let command = try XCTUnwrap(container["command"] as? [String])
        XCTAssertEqual(Array(command.prefix(2)), ["vmerge", "dashboard"])
        func option(_ name: String) throws -> String {
            let index = try XCTUnwrap(command.firstIndex(of: name), "the command has no \(name)")
            return try XCTUnwrap(command.indices.contains(index + 1) ? command[index + 1] : nil)
        }
        // The port it listens on is the container's, which the probes, the Service and the scrape use.
        let listen = try option("--listen")
        let port = try XCTUnwrap(Int(listen.split(separator: ":").last ?? ""))
        let ports = try XCTUnwrap(container["ports"] as? [[String: Any]])
        XCTAssertEqual(ports.count, 1)
        XCTAssertEqual(ports.first?["containerPort"] as? Int, port)
        let portName = try XCTUnwrap(ports.first?["name"] as? String)
        for probe in ["readinessProbe", "livenessProbe"] {
            XCTAssertEqual(at(container, probe, "httpGet", "path") as? String, "/healthz", probe)
            XCTAssertEqual(at(container, probe, "httpGet", "port") as? String, portName, probe)
        }
        XCTAssertEqual(at(service, "spec", "type") as? String, "ClusterIP")
        XCTAssertEqual(at(service, "spec", "selector") as? [String: String], labels)
        XCTAssertEqual(at(service, "spec", "ports", 0, "targetPort") as? String, portName)
        let annotations = try XCTUnwrap(at(pod, "metadata", "annotations") as? [String: String])
        XCTAssertEqual(annotations["prometheus.io/scrape"], "true")
        XCTAssertEqual(annotations["prometheus.io/port"], String(port))
        XCTAssertEqual(annotations["prometheus.io/path"], "/metrics")
        // The database's URL and the token come from Secrets; nothing in the image is written.
        XCTAssertNotNil(at(container, "env", 0, "valueFrom", "secretKeyRef"))
        XCTAssertEqual(at(container, "env", 0, "name") as? String, "VMERGE_DB")
        XCTAssertEqual(at(container, "securityContext", "readOnlyRootFilesystem") as? Bool, true)
        let tokenFile = try option("--token-file")
        let mounts = try XCTUnwrap(container["volumeMounts"] as? [[String: Any]])
        let tokenMount = try XCTUnwrap(mounts.first { tokenFile.hasPrefix(($0["mountPath"] as? String ?? "-") + "/") })
        let volumes = try XCTUnwrap(at(pod, "spec", "volumes") as? [[String: Any]])
        let tokenVolume = volumes.first { $0["name"] as? String == tokenMount["name"] as? String }
        XCTAssertNotNil(at(tokenVolume, "secret", "secretName"), "the token file is not in a Secret's volume")
        try runAsThePodWould(
            command, tokenFile: tokenFile, mountPath: try XCTUnwrap(tokenMount["mountPath"] as? String))
    }

    /// The container's command as written but on a free port, the token file laid out as kubelet
    /// lays out a Secret's volume (`token` a link to `..data/token`, `..data` a link to a dated
    /// folder); it must serve its probes' path and the metrics over the queue, and stop with exit 0
    /// on SIGTERM.
    private func runAsThePodWould(_ command: [String], tokenFile: String, mountPath: String) throws {
        let mount = folder.appendingPathComponent(String(mountPath.dropFirst()))
        let dated = mount.appendingPathComponent("..2025_01_01_00_00_00.000000001")
        try FileManager.default.createDirectory(at: dated, withIntermediateDirectories: true)
        try Data("0123456789abcdefghijklmnopqrstuv".utf8).write(to: dated.appendingPathComponent("token"))
        try FileManager.default.createSymbolicLink(
            atPath: mount.appendingPathComponent("..data").path, withDestinationPath: dated.lastPathComponent)
        try FileManager.default.createSymbolicLink(
            atPath: mount.appendingPathComponent("token").path, withDestinationPath: "..data/token")
        var arguments = Array(command.dropFirst())
        arguments[try XCTUnwrap(arguments.firstIndex(of: "--listen")) + 1] = "127.0.0.1:0"
        arguments[try XCTUnwrap(arguments.firstIndex(of: tokenFile))] = folder.path + tokenFile
        let (dashboard, port) = try startDashboard(arguments: arguments, environment: ["VMERGE_DB": database])
        XCTAssertTrue(dashboard.log.contains("(metrics at /metrics; actions on; API at /api/v1/)"), dashboard.log)
        let health = try RawHTTP(port: port).request("GET", "/healthz")
        XCTAssertEqual(health.status, 200)
        XCTAssertEqual(health.text.trimmingCharacters(in: .whitespacesAndNewlines), "ok")
        let metrics = try RawHTTP(port: port).request("GET", "/metrics")
        XCTAssertTrue(metrics.text.components(separatedBy: "\n").contains("vmerge_database_up 1"), metrics.text)
        dashboard.kill(SIGTERM)
        XCTAssertEqual(dashboard.waitForExit(seconds: 30), 0, dashboard.log)
    }
}
