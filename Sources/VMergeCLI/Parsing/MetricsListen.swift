import VMergeCore
import VMergeJobs
import VMergeWeb

extension OptionSpec {
    /// watch's and worker's --metrics-listen.
    static let metricsListen = OptionSpec(
        long: "metrics-listen", short: nil, value: "address:port",
        help: "Serve this process's Prometheus metrics at /metrics (and /healthz) here: jobs finished and failed, "
            + "job duration and speed, bytes read and written, sources deleted, its last heartbeat. A numeric "
            + "IPv4 address and port, or [IPv6]:port; port 0 takes a free one (the line on stderr says which). "
            + "(default: no server)")
}

extension SharedOptions {
    /// A listen address as --listen and --metrics-listen read it (`unixSockets`: unix:PATH too);
    /// a malformed one is a usage error.
    static func listenAddress(_ text: String, option: String, unixSockets: Bool = false) throws -> ListenAddress {
        do throws(ListenAddress.Refusal) {
            return try ListenAddress.parse(text, unixSockets: unixSockets)
        } catch {
            let expected = unixSockets ? "address:port or unix:PATH" : "address:port"
            throw UsageError.invalidValue(text, for: option, expected: "\(expected) (\(error.reason))")
        }
    }

    /// --metrics-listen's address, nil when not given.
    static let metricsListen = CommandOption<ListenAddress?>(OptionSpec.metricsListen) { parsed, spec in
        guard let text = parsed.values[spec.long]?.last else { return nil }
        return try listenAddress(text, option: spec.long)
    }
}

/// The metrics server of a `watch` or `worker` process (`--metrics-listen`): started before the
/// first job, so a port that is taken stops the command at once (exit 1), before any work.
enum MetricsServer {
    static func start(
        _ address: ListenAddress?, command: String, metrics: RunMetrics, printer: MessagePrinter
    ) throws -> HTTPServer? {
        guard let address else { return nil }
        if !address.isLoopback {
            printer.print(
                .warning, file: nil,
                "\(command): --metrics-listen \(address) can be reached from other machines: anyone who can connect "
                    + "reads this process's metrics",
                evenIfQuiet: true)
        }
        let server = try HTTPServer(listening: address, handler: RunMetricsSite(metrics: metrics))
        printer.sink(command)("serving metrics at http://\(server.address)/metrics")
        return server
    }
}
