import Foundation

/// Sends a round of events, each receiver's on a thread of its own, in order: a receiver that is
/// slow or never answers (each POST has 30 s) holds up only its own events, never another's. A
/// receiver's first failure ends its lane for the round: the events behind it wait with it (they
/// would meet the same receiver).
package enum ReceiverLanes {
    /// Each event tried, with nil when its receiver took it or why not; the events of a lane
    /// ended by a failure, or by `shouldStop`, are not in it.
    package static func deliver<Event: Sendable>(
        _ events: [Event], receiver: (Event) -> String, shouldStop: @escaping @Sendable () -> Bool,
        post: @escaping @Sendable (Event) -> String?
    ) -> [(event: Event, problem: String?)] {
        var order: [String] = []
        var lanes: [String: [Event]] = [:]
        for event in events {
            let key = receiver(event)
            if lanes[key] == nil { order.append(key) }
            lanes[key, default: []].append(event)
        }
        let results = Results<Event>()
        let group = DispatchGroup()
        for key in order {
            let lane = lanes[key] ?? []
            group.enter()
            let thread = Thread {
                defer { group.leave() }
                for event in lane {
                    guard !shouldStop() else { return }
                    let problem = post(event)
                    results.append((event, problem))
                    if problem != nil { return }
                }
            }
            thread.name = "vmerge.events.lane"
            thread.start()
        }
        group.wait()
        return results.all
    }
}

private final class Results<Event>: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [(event: Event, problem: String?)] = []

    func append(_ result: (event: Event, problem: String?)) { lock.withLock { list.append(result) } }
    var all: [(event: Event, problem: String?)] { lock.withLock { list } }
}
