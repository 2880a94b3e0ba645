import CFFmpeg
import CVMergeSupport
import Foundation

/// What belongs to the whole process rather than to one merge: signal handling and FFmpeg's log
/// level. The process's owner (the command line at start, the fuzz target) sets it up once; a
/// merge only asks whether a signal wants it to stop.
package enum VMergeProcess {
    /// Makes FFmpeg quiet (vmerge reports problems itself), lets SIGINT/SIGTERM stop a run
    /// cleanly instead of killing it with a half-written file, and turns a closed pipe into EPIPE.
    package static func prepare() {
        silenceFFmpeg()
        vm_install_cancel_handlers()
        vm_ignore_sigpipe()
    }

    /// FFmpeg's log off, nothing else (for the fuzz target, whose signals belong to libFuzzer).
    package static func silenceFFmpeg() { av_log_set_level(AV_LOG_QUIET) }

    /// The signal that asked the run to stop (SIGINT 2, SIGTERM 15), or 0.
    package static var pendingSignal: Int32 { vm_cancel_signal() }

    /// " (SIGTERM)" when a signal is stopping the process, else "": for a "stopped" line.
    package static var stopNote: String {
        switch pendingSignal {
        case 0: return ""
        case SIGINT: return " (SIGINT)"
        case SIGTERM: return " (SIGTERM)"
        case let signal: return " (signal \(signal))"
        }
    }
}
