import Dispatch

/// Elapsed time on the monotonic clock: a wall-clock step (NTP, a user changing the time)
/// can never make a run's duration negative or its speed absurd.
package struct Stopwatch: Sendable {
    private let start = DispatchTime.now().uptimeNanoseconds

    package init() {}

    package var seconds: Double { Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9 }
}
