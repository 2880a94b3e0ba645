import Foundation
import VMergeAV
import VMergeCore
import VMergeJobs

/// The dry run's listing: a line per input, then the output and each rendition.
extension MergeCommand {
    /// The dry run's account: one line per input, then the output. On stdout, unless the
    /// report is going there.
    func printPlan(_ plan: MergePlan, _ preflight: Preflight, console: Console, printer: MessagePrinter) {
        // The order is said when one was asked for: none keeps the command's.
        var lines = job.order == .none ? [] : ["order  \(job.order.rawValue): \(job.order.meaning)"]
        lines += plan.inputs.map { planLine(for: $0, in: plan) }
        let size = job.options.outputSize
        var output =
            "output  \(job.output.escaped)  \(plan.clips.count) clip\(plan.clips.count == 1 ? "" : "s"), "
            + "\(formatSeconds(Double(plan.outputDurationMicros) / 1e6)) s, \(size.width)x\(size.height) at "
            + "\(job.options.frameRate) fps"
        output += ", at most about \(ByteSize.format(preflight.estimatedBytes))"
        output += "; " + existingText(preflight.existing) + "; not written (--dry-run)"
        lines.append(output)
        for (rendition, shape) in zip(job.options.renditions, job.options.pictures.dropFirst()) {
            let size = shape.outputSize
            let bytes = FreeSpace.estimatedOutputBytes(durationMicros: plan.outputDurationMicros, options: shape)
            lines.append(
                "rendition  \(rendition.fileName(besideOutput: job.output).escaped)  \(rendition.name): "
                    + "\(size.width)x\(size.height), fit \(shape.fit.rawValue), crf \(formatDecimal(shape.effectiveCRF)), "
                    + "at most about \(ByteSize.format(bytes)); not written (--dry-run)")
        }
        // Each line names files from outside: escaped line by line, so none can break into two.
        if reportTo == .standardOutput { return printer.text(lines, kind: "plan") }
        console.output(lines.map(VisibleText.of).joined(separator: "\n") + "\n")
    }

    /// One input's line: "keep  <path>  <what it is; where it goes>", "drop  <path>  <why>", or
    /// "fail  <path>  <why>" for an input the merge would stop at (no --skip-invalid).
    private func planLine(
        for input: (probe: InputProbe, edit: InputEdit, disposition: InputDisposition), in plan: MergePlan
    ) -> String {
        switch input.disposition {
        case let .kept(index):
            let p = plan.clips[index]
            let v = p.clip.video
            var line = "keep  \(input.probe.path)  "
            line += "\(formatSeconds(p.clip.durationSeconds)) s, \(v.codec) \(v.width)x\(v.height) "
            line += "\(formatSeconds(v.frameRate.doubleValue)) fps, \(orientationText(v.orientation)), "
            line += "crop \(p.crop.width)x\(p.crop.height)+\(p.crop.x)+\(p.crop.y), "
            // Each rendition's own window of the same picture.
            for (rendition, shape) in zip(job.options.renditions, p.renditions) {
                line +=
                    "\(rendition.name) crop \(shape.crop.width)x\(shape.crop.height)+\(shape.crop.x)+\(shape.crop.y), "
            }
            line += p.clip.audio.map { "audio \($0.codec) \($0.sampleRate) Hz \($0.channels) ch" } ?? "no audio"
            if p.isTrimmed {
                line +=
                    "; from \(formatSeconds(Double(p.trimStartMicros) / 1e6)) s to "
                    + "\(formatSeconds(Double(p.trimEndMicros) / 1e6)) s "
                    + "(\(formatSeconds(Double(p.trimEndMicros - p.trimStartMicros) / 1e6)) s)"
            }
            line += "; at \(formatSeconds(Double(p.startMicros) / 1e6)) s"
            if p.isCut {
                line +=
                    ", cut at \(formatSeconds(Double(p.trimStartMicros + p.durationMicros) / 1e6)) s by --max-duration"
            }
            return line + recordedText(input.probe.path)
        case let .dropped(reason):
            if case let .invalid(_, why) = input.probe, !job.options.skipInvalid {
                return "fail  \(input.probe.path)  \(why) (--skip-invalid would drop it)"
                    + recordedText(input.probe.path)
            }
            return "drop  \(input.probe.path)  \(reason.message)" + recordedText(input.probe.path)
        case .notProbed:
            return "----  \(input.probe.path)  not probed"
        }
    }

    /// With --sort recorded, the time the order was taken from (read again from the header: a
    /// dry run's cost, not the merge's), or that there is none.
    private func recordedText(_ path: String) -> String {
        guard job.order == .recorded else { return "" }
        guard let time = RecordingClock.read(path, confinedTo: job.confinement) else {
            return "; no recording time (placed last)"
        }
        return "; recorded \(time.text) (\(time.tag))"
    }

    /// What the output's name holds, as the merge would take it.
    private func existingText(_ existing: Preflight.Existing?) -> String {
        switch existing {
        case nil: return "new"
        case .thisJob?:
            return job.options.overwrite
                ? "exists: this job's output, -y makes it again" : "exists: this job's output, the merge would skip it"
        case .anotherFile?:
            return job.options.overwrite
                ? "exists: another file, -y replaces it" : "exists: another file, kept without -y"
        case .anotherUsersFile?:
            return job.options.overwrite
                ? "exists: another user's file, -y replaces it" : "exists: another user's file, kept without -y"
        }
    }

    private func orientationText(_ orientation: Orientation) -> String {
        let turn = orientation.rotationDegrees == 0 ? "upright" : "rotate \(orientation.rotationDegrees)"
        return orientation.isMirrored ? "\(turn) + mirror" : turn
    }
}
