import Foundation
import VMergeCore

/// One remote object as a job reads it: fetched by ranges as the demuxer asks, each byte at most
/// once, into a private cache file (unlinked at once, so nothing is left behind by a kill) that
/// every later read of the job (the probe, the decode, the byte accounting) is served from. A
/// read that misses fetches ahead of it (more as reading stays sequential), never what is held.
final class RemoteObjectReader: RandomAccessSource, @unchecked Sendable {
    let fetcher: any RemoteFetcher
    let object: RemoteObjectInfo
    let retries: RetrySchedule
    private let cache: Int32
    private let lock = NSLock()
    private var held = ByteRanges()
    private var fetchedBytes: Int64 = 0
    private var requestCount = 0
    private var sequentialEnd: Int64 = -1
    private var readAhead: Int64

    static let smallestFetch: Int64 = 256 << 10
    static let largestFetch: Int64 = 8 << 20

    /// Looks the object up (its size and tag) and makes the cache file in `folder`.
    init(
        _ fetcher: any RemoteFetcher, cacheFolder folder: String = NSTemporaryDirectory(),
        retries: RetrySchedule = .init()
    ) throws {
        self.fetcher = fetcher
        self.retries = retries
        object = try fetcher.info()
        readAhead = RemoteObjectReader.smallestFetch
        var template =
            Array((folder.hasSuffix("/") ? folder : folder + "/").utf8CString.dropLast())
            + Array("vmerge-remote.XXXXXX".utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard descriptor >= 0 else {
            throw RemoteReadFailure(
                name: fetcher.name,
                reason: "cannot make a cache file in \(folder): \(String(cString: strerror(errno)))", isTransient: false
            )
        }
        // Unlinked at once: the cache goes with the descriptor, however the job ends.
        _ = POSIX.unlink(FileName(cString: template))
        cache = descriptor
    }

    deinit { close(cache) }

    var displayName: String { fetcher.name.description }
    var size: Int64 { object.size }

    /// The bytes fetched so far and in how many requests (the report's "fetched").
    var fetched: (bytes: Int64, requests: Int) { lock.withLock { (fetchedBytes, requestCount) } }

    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int {
        guard offset < object.size, buffer.count > 0 else { return 0 }
        let wanted = offset..<min(object.size, offset + Int64(buffer.count))
        try lock.withLock { try ensure(wanted) }
        let count = pread(cache, buffer.baseAddress, wanted.count, off_t(offset))
        guard count >= 0 else {
            throw RemoteReadFailure(
                name: fetcher.name, reason: "the cache file: \(String(cString: strerror(errno)))", isTransient: false)
        }
        return count
    }

    /// Fetches what `wanted` (and the read-ahead past it) misses.
    private func ensure(_ wanted: Range<Int64>) throws {
        guard !held.gaps(in: wanted).isEmpty else { return }
        // Reading on from where the last fetch ended doubles the read-ahead; a jump (the index at
        // the end of an MP4) starts again small, so probing costs a tail read, not the file.
        readAhead =
            wanted.lowerBound == sequentialEnd
            ? min(readAhead * 2, RemoteObjectReader.largestFetch) : RemoteObjectReader.smallestFetch
        let window = wanted.lowerBound..<min(object.size, max(wanted.upperBound, wanted.lowerBound + readAhead))
        for gap in held.gaps(in: window) { try fetch(gap) }
        sequentialEnd = window.upperBound
    }

    private func fetch(_ gap: Range<Int64>) throws {
        var position = gap.lowerBound
        var attempt = 0
        while position < gap.upperBound {
            attempt += 1
            let start = position
            var writeFailure: Int32 = 0
            requestCount += 1
            do {
                try fetcher.fetch(start..<gap.upperBound, of: object) { bytes in
                    let room = Int(gap.upperBound - position)
                    let usable = UnsafeRawBufferPointer(rebasing: bytes.prefix(room))
                    guard self.write(usable, at: position, failure: &writeFailure) else { return false }
                    position += Int64(usable.count)
                    return true
                }
                attempt = 0
            } catch let failure as RemoteReadFailure {
                record(start..<position)
                guard failure.isTransient, let wait = retries.wait(after: attempt, asked: nil) else { throw failure }
                retries.sleep(wait) { false }
                continue
            }
            record(start..<position)
            if writeFailure != 0 {
                throw RemoteReadFailure(
                    name: fetcher.name, reason: "the cache file: \(String(cString: strerror(writeFailure)))",
                    isTransient: false)
            }
            // An answer that ended early without an error (a server that cut the body cleanly).
            if position == start {
                throw RemoteReadFailure(
                    name: fetcher.name, reason: "the server sent none of the bytes asked for", isTransient: false)
            }
        }
    }

    private func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64, failure: inout Int32) -> Bool {
        var done = 0
        while done < bytes.count {
            let count = pwrite(cache, bytes.baseAddress! + done, bytes.count - done, off_t(offset + Int64(done)))
            if count < 0 {
                if errno == EINTR { continue }
                failure = errno
                return false
            }
            done += count
        }
        return true
    }

    private func record(_ range: Range<Int64>) {
        guard !range.isEmpty else { return }
        held = ByteRanges(held.ranges + [range])
        fetchedBytes += Int64(range.count)
    }
}
