import CFFmpeg
import CVMergeSupport
import Foundation
import VMergeCore

/// Owns a vm_cancel_token: one merge's own way to be stopped, beside SIGINT/SIGTERM (which stop
/// every merge in the process). A queue worker running several jobs cancels one of them (its
/// lease was lost, or it was cancelled in the queue) while the others go on. The merge checks
/// it wherever it checks for a signal, FFmpeg's interrupt callback included, and stops as a
/// signal stops it: `VMergeError.cancelled`, its temporary output removed.
package final class CancelToken: @unchecked Sendable {
    let pointer: OpaquePointer

    package init() throws {
        guard let token = vm_cancel_token_new() else {
            throw VMergeError.io(file: "cancel token", message: "out of memory")
        }
        pointer = token
    }

    deinit { vm_cancel_token_free(pointer) }

    /// Stops the merge as `signal` would (the caller knows and says why); any thread.
    package func cancel(signal: Int32 = SIGTERM) { vm_cancel_token_cancel(pointer, signal) }

    /// The process's signal, else this token's, else 0.
    package var signal: Int32 { vm_cancel_token_signal(pointer) }
}

extension Optional where Wrapped == CancelToken {
    /// Why the merge should stop now (the process's signal, else its token's), or 0.
    var stopSignal: Int32 { vm_cancel_token_signal(self?.pointer) }

    /// Throws `VMergeError.cancelled` once the merge was asked to stop.
    func check() throws {
        let signal = stopSignal
        if signal != 0 { throw VMergeError.cancelled(signal: signal) }
    }

    /// For FFmpeg's interrupt callback (AVIOInterruptCB.opaque): the token, or NULL.
    var opaque: UnsafeMutableRawPointer? { self.map { UnsafeMutableRawPointer($0.pointer) } }
}
