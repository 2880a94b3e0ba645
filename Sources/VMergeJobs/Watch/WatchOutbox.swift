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
        // What a watcher killed while writing an event left (never an event: not yet named one).
        _ = TemporaryFile.sweep(folder: folders.eventsPath)
    }

    /// The inbox was opened anew.
    func moved(to folders: WatchFolders) {
        lock.withLock { place = (folders.events, folders.eventsPath) }
        _ = TemporaryFile.sweep(folder: folders.eventsPath)
    }

    /// Writes `event` for each receiver (each once), readable by this user alone and synced
    /// before it gets its name; an event that cannot be written is said, and the job goes on (an
    /// event never changes a job). `idSeed`: the same for the same event of the same job (a job's
    /// end said again after a crash gets the same webhook-id, so receivers drop the repeat).
    func add(_ event: JobEvent, to urls: [String], idSeed: String? = nil, log: DiagnosticSink) {
        let payload = Array(event.payload.text().utf8)
        var seen: Set<String> = []
        for url in urls where seen.insert(url).inserted {
            let id =
                idSeed.map { WatchOutbox.eventID(seed: $0 + "\u{0}" + event.kind.rawValue + "\u{0}" + url) }
                ?? WebhookSender.eventID()
            let created = Date()
            let header = JSON.object([
                ("id", .string(id)), ("url", .string(url)), ("created", .number(created.timeIntervalSince1970)),
            ])
            let name = String(format: "%013lld", Int64(created.timeIntervalSince1970 * 1000)) + "-" + id + ".event"
            let (folder, path) = lock.withLock { place }
            do {
                // The URL may carry a token: the file is this user's alone from the moment it is made.
                let file = try TemporaryFile(in: folder, target: path + "/" + name, mode: 0o600)
                try file.write(Array((header.text() + "\n").utf8) + payload)
                try file.sync()
                try file.publish(replace: .never)
                _ = fsync(folder.raw)
            } catch VMergeError.outputExists {
                continue  // said before under this id: the receiver has it, or will
            } catch {
                log.warning(
                    "\(event.kind.rawValue) for \(RemoteName.shown(url)) not kept to send: \(VMergeError.message(of: error))"
                )
            }
        }
    }

    /// A webhook-id made from `seed`: msg_ and 32 hex digits, as `WebhookSender.eventID` makes.
    static func eventID(seed: String) -> String {
        "msg_" + SHA256.digest(Array(seed.utf8)).prefix(16).map { String(format: "%02x", $0) }.joined()
    }

    /// The events waiting, and the age of the oldest (seconds), for the metrics.
    func waiting(now: Date = Date()) -> (count: Int, oldestAge: Double) {
        let names = eventNames()
        let oldest = names.first.flatMap { Double($0.prefix(13)) }.map { now.timeIntervalSince1970 - $0 / 1000 }
        return (names.count, max(0, oldest ?? 0))
    }

    /// The lanes events are sent on (made by the first `deliverDue`).
    private var lanes: ReceiverLanes<Taken>?

    /// Takes the events due now (at most `limit`; none of a receiver whose lane still runs, nor
    /// one being sent: its file is locked) and hands them to their receivers' lanes
    /// (`ReceiverLanes`: a receiver that never answers holds up only its own); returns how many
    /// were taken. Never waits for a receiver.
    @discardableResult
    func deliverDue(
        sender: WebhookSender, access: RemoteAccess, limit: Int = 10, log: DiagnosticSink, metrics: RunMetrics
    ) -> Int {
        let lanes = lanes(sender: sender, access: access, log: log, metrics: metrics)
        let (now, busy) = (Date(), lanes.busy)
        let due = eventNames().filter { name in lock.withLock { backoff[name].map { $0.notBefore <= now } ?? true } }
        var taken: [Taken] = []
        for name in due where taken.count < limit {
            guard let event = take(name, access: access, log: log), !busy.contains(event.url) else { continue }
            if now.timeIntervalSince1970 - event.created > WatchOutbox.lifetime {
                log.warning("\(event.type) to \(RemoteName.shown(event.url)) given up: not delivered in 3 days")
                remove(event.name)
                continue
            }
            taken.append(event)
        }
        lanes.send(taken)
        return taken.count
    }

    /// Waits until no lane sends, or `deadline`.
    func waitUntilIdle(before deadline: Date) { lock.withLock { lanes }?.waitUntilIdle(before: deadline) }

    private func lanes(sender: WebhookSender, access: RemoteAccess, log: DiagnosticSink, metrics: RunMetrics)
        -> ReceiverLanes<Taken>
    {
        if let lanes = lock.withLock({ self.lanes }) { return lanes }
        let made = ReceiverLanes<Taken>(
            receiver: { $0.url }, shouldStop: { VMergeProcess.pendingSignal != 0 },
            post: { WatchOutbox.post($0, sender: sender, access: access) },
            tried: { [self] event, problem in
                metrics.delivered(problem == nil)
                guard let problem else { return remove(event.name) }
                let attempts = lock.withLock { (backoff[event.name]?.attempts ?? 0) + 1 }
                // 5 s, 10 s, 20 s ... an hour between tries, as the queue's workers wait.
                let wait = min(3600, 5 * pow(2, Double(attempts - 1)))
                lock.withLock { backoff[event.name] = (attempts, Date().addingTimeInterval(wait)) }
                log.warning(
                    "\(event.type) to \(RemoteName.shown(event.url)) not delivered (try \(attempts)): \(problem)")
            },
            untried: { [self] event in
                // Behind a receiver that failed: not a try of its own; due again a little later.
                lock.withLock {
                    backoff[event.name] = (backoff[event.name]?.attempts ?? 0, Date().addingTimeInterval(5))
                }
            })
        lock.withLock { lanes = made }
        return made
    }

    /// One try of `event`: nil when its receiver took it.
    private static func post(_ event: Taken, sender: WebhookSender, access: RemoteAccess) -> String? {
        switch NotifyTarget.parse(event.url, access: access) {
        case let .success(target): sender.post(id: event.id, body: event.payload, to: target)
        case .failure: "not an https URL vmerge can send to"
        }
    }

    /// The event files, oldest first (other names, such as a killed write's temporary, are not events).
    private func eventNames() -> [String] {
        (SafeFile.names(in: folder) ?? []).filter(WatchOutbox.isEventName).sorted()
    }

    /// `<13 digits>-msg_<32 hex digits>.event`.
    static func isEventName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard bytes.count == 13 + 1 + 4 + 32 + 6, name.hasSuffix(".event"), bytes[13] == UInt8(ascii: "-"),
            name.dropFirst(14).hasPrefix("msg_")
        else { return false }
        let digits = bytes[0..<13].allSatisfy { (0x30...0x39).contains($0) }
        let hex = bytes[18..<50].allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
        return digits && hex
    }

    private struct Taken: Sendable {
        let name: String
        /// Its lock is held while it lives (until it is removed or put off).
        let file: FileDescriptor
        let id: String
        let url: String
        let created: Double
        let type: String
        let payload: [UInt8]
    }

    /// The event `name`, locked against the other watchers; nil when another holds it or it was
    /// sent meanwhile. A file that is no event this user wrote (another's, writable by others,
    /// not a file, unreadable, its id not its name's) is set aside as `<name>.bad`, said once:
    /// never sent, and never counted as owed.
    private func take(_ name: String, access: RemoteAccess, log: DiagnosticSink) -> Taken? {
        let folder = lock.withLock { place.folder }
        let file = FileDescriptor(
            POSIX.openat(folder.raw, FileName(name), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0))
        guard file.raw >= 0 else {
            if errno != ENOENT { setAside(name, because: "cannot be opened: \(SafeFile.errorText())", log: log) }
            return nil
        }
        guard flock(file.raw, LOCK_EX | LOCK_NB) == 0 else { return nil }
        // Sent and removed by another watcher between our listing and our lock.
        guard let info = file.info, info.st_nlink > 0 else { return nil }
        let id = String(name.dropFirst(14).dropLast(".event".count))
        var why: String?
        var taken: Taken?
        if FileKind(mode: info.st_mode) != .regular || info.st_uid != geteuid() || info.st_mode & 0o022 != 0 {
            why = "is not a file this user alone wrote"
        } else if let data = try? SafeFile.read(file, name: name, limit: WatchOutbox.maxEventBytes),
            let newline = data.firstIndex(of: UInt8(ascii: "\n")),
            let header = try? JSONSerialization.jsonObject(with: data[data.startIndex..<newline]) as? [String: Any],
            header["id"] as? String == id, let url = header["url"] as? String,
            let created = (header["created"] as? NSNumber)?.doubleValue
        {
            let payload = Array(data[(newline + 1)...])
            let body = (try? JSONSerialization.jsonObject(with: Data(payload))) as? [String: Any]
            taken = Taken(
                name: name, file: file, id: id, url: url, created: created,
                type: body?["type"] as? String ?? "event", payload: payload)
            if body == nil { why = "does not hold an event" }
            // Never sendable, so never tried for three days.
            if case .failure = NotifyTarget.parse(url, access: access) { why = "names no https URL to send to" }
        } else {
            why = "does not hold an event"
        }
        if let why {
            setAside(name, because: why, log: log)
            return nil
        }
        return taken
    }

    /// Renames a file that is no event out of the events' names, and says so.
    private func setAside(_ name: String, because why: String, log: DiagnosticSink) {
        let (folder, path) = lock.withLock { place }
        guard POSIX.renameat(folder.raw, FileName(name), folder.raw, FileName(name + ".bad")) == 0 else { return }
        log.warning("\(path)/\(name): \(why); set aside as \(name).bad, not sent")
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
