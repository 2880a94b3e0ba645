import CVMergePOSIX
import Foundation
import VMergeAV
import VMergeCore
import VMergeRemote

/// A watch folder's events (`--notify`, a job.json's `notify`), owed to their receivers: one file
/// per event and receiver in the inbox's `.events` folder, written whole (and synced) when the
/// runner says the event, deleted once a receiver took it. The folder belongs to every watcher
/// of the inbox, as `.processing` does: an event said by a watcher that was killed is sent by the
/// next one (or by the same one restarted), so delivery is at least once. Two watchers never
/// send one event at the same time: each holds the file's lock while it sends.
///
/// A file is a header line (`{"id", "url", "created"}`) and the event's JSON as it was signed
/// first, byte for byte (its metadata comes back exactly).
final class WatchOutbox: @unchecked Sendable {
    /// The inbox's .events, open (again when a removed inbox comes back: `moved`).
    private var place: (folder: FileDescriptor, path: String)
    private var folder: FileDescriptor { lock.withLock { place.folder } }
    private var path: String { lock.withLock { place.path } }
    /// Past this, an event is given up (said, and forgotten): the queue's outbox keeps three days too.
    static let lifetime = 3 * 86400.0
    /// What an event file may hold: the event's report, with every input.
    static let maxEventBytes = 16 << 20
    private let lock = NSLock()
    /// Events tried and refused: tried again after `notBefore` (a restart tries them at once).
    private var backoff: [String: (attempts: Int, notBefore: Date)] = [:]

    init(_ folders: WatchFolders) {
        place = (folders.events, folders.eventsPath)
    }

    /// The inbox was opened anew.
    func moved(to folders: WatchFolders) {
        lock.withLock { place = (folders.events, folders.eventsPath) }
    }

    /// Writes `event` for each receiver; an event that cannot be written is said, and the job
    /// goes on (an event never changes a job).
    func add(_ event: JobEvent, to urls: [String], log: DiagnosticSink) {
        let payload = event.payload.text()
        for url in urls {
            let id = WebhookSender.eventID()
            let created = Date()
            let header = JSON.object([
                ("id", .string(id)), ("url", .string(url)), ("created", .number(created.timeIntervalSince1970)),
            ])
            let name = String(format: "%013lld", Int64(created.timeIntervalSince1970 * 1000)) + "-" + id + ".event"
            let (folder, path) = lock.withLock { place }
            do {
                try SafeFile.write(header.text() + "\n" + payload, to: path + "/" + name, replace: .never, in: folder)
            } catch {
                log.warning(
                    "\(event.kind.rawValue) for \(RemoteName.shown(url)) not kept to send: \(VMergeError.message(of: error))"
                )
            }
        }
    }

    /// The events waiting, and the age of the oldest (seconds), for the metrics.
    func waiting(now: Date = Date()) -> (count: Int, oldestAge: Double) {
        let names = eventNames()
        let oldest = names.first.flatMap { Double($0.prefix(13)) }.map { now.timeIntervalSince1970 - $0 / 1000 }
        return (names.count, max(0, oldest ?? 0))
    }

    /// Sends the events due now (at most `limit`), each signed by `sender`; returns how many were tried.
    @discardableResult
    func deliverDue(
        sender: WebhookSender, access: RemoteAccess, limit: Int = 10, log: DiagnosticSink, metrics: RunMetrics
    ) -> Int {
        let now = Date()
        let due = eventNames().filter { name in lock.withLock { backoff[name].map { $0.notBefore <= now } ?? true } }
        var tried = 0
        for name in due.prefix(limit) where VMergeProcess.pendingSignal == 0 {
            guard let event = take(name) else { continue }
            tried += 1
            // The file (and its lock) stays open until the event is removed or put off.
            withExtendedLifetime(event.file) {
                deliver(event, named: name, sender: sender, access: access, log: log, metrics: metrics)
            }
        }
        return tried
    }

    private func deliver(
        _ event: Taken, named name: String, sender: WebhookSender, access: RemoteAccess, log: DiagnosticSink,
        metrics: RunMetrics
    ) {
        if Date().timeIntervalSince1970 - event.created > WatchOutbox.lifetime {
            log.warning("\(event.type) to \(RemoteName.shown(event.url)) given up: not delivered in 3 days")
            return remove(name)
        }
        let problem: String?
        switch NotifyTarget.parse(event.url, access: access) {
        case let .success(target): problem = sender.post(id: event.id, body: event.payload, to: target)
        case .failure: problem = "not an https URL vmerge can send to"
        }
        metrics.delivered(problem == nil)
        guard let problem else { return remove(name) }
        let attempts = lock.withLock { (backoff[name]?.attempts ?? 0) + 1 }
        // 5 s, 10 s, 20 s ... an hour between tries, as the queue's workers wait.
        let wait = min(3600, 5 * pow(2, Double(attempts - 1)))
        lock.withLock { backoff[name] = (attempts, Date().addingTimeInterval(wait)) }
        log.warning("\(event.type) to \(RemoteName.shown(event.url)) not delivered (try \(attempts)): \(problem)")
    }

    /// The event files, oldest first (other names, such as a killed write's temporary, are not events).
    private func eventNames() -> [String] {
        (SafeFile.names(in: folder) ?? []).filter(WatchOutbox.isEventName).sorted()
    }

    static func isEventName(_ name: String) -> Bool {
        let parts = name.split(separator: "-", maxSplits: 1)
        return name.hasSuffix(".event") && parts.count == 2 && parts[0].count == 13
            && parts[0].allSatisfy { $0.isASCII && $0.isNumber } && parts[1].hasPrefix("msg_")
    }

    private struct Taken {
        let file: FileDescriptor
        let id: String
        let url: String
        let created: Double
        let type: String
        let payload: [UInt8]
    }

    /// The event `name`, locked against the other watchers; nil when another holds it, it was
    /// sent meanwhile, or it cannot be read (then it is left, and said by nobody: a stranger's file).
    private func take(_ name: String) -> Taken? {
        let file = FileDescriptor(
            POSIX.openat(folder.raw, FileName(name), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0))
        guard file.raw >= 0, flock(file.raw, LOCK_EX | LOCK_NB) == 0 else { return nil }
        // Sent and removed by another watcher between our listing and our lock.
        guard let info = file.info, info.st_nlink > 0, FileKind(mode: info.st_mode) == .regular,
            let data = try? SafeFile.read(file, name: name, limit: WatchOutbox.maxEventBytes),
            let newline = data.firstIndex(of: UInt8(ascii: "\n")),
            let header = try? JSONSerialization.jsonObject(with: data[data.startIndex..<newline]) as? [String: Any],
            let id = header["id"] as? String, let url = header["url"] as? String,
            let created = header["created"] as? Double
        else { return nil }
        let payload = Array(data[(newline + 1)...])
        let type = ((try? JSONSerialization.jsonObject(with: Data(payload))) as? [String: Any])?["type"] as? String
        return Taken(file: file, id: id, url: url, created: created, type: type ?? "event", payload: payload)
    }

    private func remove(_ name: String) {
        _ = POSIX.unlinkat(folder.raw, FileName(name), 0)
        lock.withLock { backoff[name] = nil }
    }
}

/// Set once, from any thread: a thread's loop ends when it is.
final class StopFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false

    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
}
