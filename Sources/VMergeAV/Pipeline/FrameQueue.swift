import CFFmpeg
import Foundation
import VMergeCore

/// What the decode/filter stage asks of the encode/mux stage.
enum WriterCommand {
    /// A filtered picture whose pts is its output frame index, of picture `picture` (0 the
    /// job's own, then each rendition's).
    case video(Frame, picture: Int)
    /// Output-format audio whose first sample belongs at output sample `start`; nothing may
    /// pass `end`; `exact` marks a clip's first block.
    case audio(Frame, start: Int64, end: Int64, exact: Bool)
    /// Silence up to this output sample.
    case padAudio(to: Int64)
    /// Repeat the last picture of every picture up to this output frame index.
    case fillVideo(upTo: Int64)
}

/// A bounded hand-off between the decode/filter thread and the encode/mux thread, so decoding
/// clip k+1 overlaps encoding clip k. Frames are small by then (the output size), and are
/// recycled through a pool, so the steady state allocates nothing per frame.
final class FrameQueue: @unchecked Sendable {
    private let condition = NSCondition()
    private var items: [WriterCommand] = []
    private var head = 0
    private var pool: [Frame] = []
    private let capacity: Int
    private var producerDone = false
    private var producerError: Error?
    /// Set by the consumer when it stops early; the producer's next put throws it.
    private var consumerError: Error?
    /// How long each side waited for the other: the producer for room (encoding was the slower
    /// half then), the consumer for a command (decoding was).
    private var waits = PipelineWaits()

    /// What the two sides have waited so far.
    var waited: PipelineWaits {
        condition.lock()
        defer { condition.unlock() }
        return waits
    }

    init(capacity: Int) {
        self.capacity = capacity
    }

    // MARK: producer side

    /// A blank frame to fill and hand back with `put`.
    func emptyFrame() throws -> Frame {
        condition.lock()
        let frame = pool.popLast()
        condition.unlock()
        return try frame ?? Frame()
    }

    /// Queues a command, waiting while the queue is full. Throws if the consumer has stopped.
    func put(_ command: WriterCommand) throws {
        condition.lock()
        defer { condition.unlock() }
        wait(while: { items.count - head >= capacity && consumerError == nil }, adding: \.decodeSeconds)
        if let consumerError { throw consumerError }
        items.append(command)
        condition.broadcast()
    }

    /// The producer has nothing more; `error` if it failed.
    func finish(_ error: Error?) {
        condition.lock()
        producerDone = true
        producerError = error
        condition.broadcast()
        condition.unlock()
    }

    // MARK: consumer side

    /// Runs `body` on every command in order until the producer finishes; rethrows the
    /// producer's error, or stops the producer with the consumer's.
    func consume(_ body: (WriterCommand) throws -> Void) throws {
        while let command = try next() {
            do {
                try body(command)
            } catch {
                stop(error)
                throw error
            }
            recycle(command)
        }
    }

    /// Makes the producer's next `put` fail (when the consumer gives up).
    func stop(_ error: Error) {
        condition.lock()
        consumerError = error
        condition.broadcast()
        condition.unlock()
    }

    private func next() throws -> WriterCommand? {
        condition.lock()
        defer { condition.unlock() }
        wait(while: { head == items.count && !producerDone }, adding: \.encodeSeconds)
        if head < items.count {
            let command = items[head]
            head += 1
            if head > 256 && head * 2 > items.count {
                items.removeFirst(head)
                head = 0
            }
            condition.broadcast()
            return command
        }
        if let producerError { throw producerError }
        return nil
    }

    /// Waits on the condition (lock held) while `blocked`, adding the time to one side's waits.
    private func wait(while blocked: () -> Bool, adding side: WritableKeyPath<PipelineWaits, Double>) {
        guard blocked() else { return }
        let clock = Stopwatch()
        while blocked() { condition.wait() }
        waits[keyPath: side] += clock.seconds
    }

    private func recycle(_ command: WriterCommand) {
        let frame: Frame
        switch command {
        case let .video(f, _), let .audio(f, _, _, _): frame = f
        case .padAudio, .fillVideo: return
        }
        frame.unref()
        condition.lock()
        pool.append(frame)
        condition.unlock()
    }
}
