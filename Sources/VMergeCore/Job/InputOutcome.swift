/// What became of one input in a run, decided from the plan and from what was written: the
/// report, the API's value and the dry run only say it.
package enum InputOutcome: Sendable {
    /// In the output (or in a dry run's plan), in this slot.
    case kept(PlannedClip, Slot)
    /// Planned, but the output (ended by --max-size) stopped before it.
    case leftOutBySize(PlannedClip)
    /// Probed and planned, but no output holds it: the run failed or was cancelled.
    case probed
    case dropped(DropReason)
    /// Not examined: the run stopped before reaching it.
    case notProbed

    /// A kept clip's place on the output: where it starts, how much of it the output holds, and
    /// where (on the clip's own timeline) and by which limit it was cut.
    package struct Slot: Sendable, Equatable {
        package var startMicros: Int64
        package var heldMicros: Int64
        package var cutAtMicros: Int64?
        package var cutBy: Truncation?
    }

    /// Every word `status` can be.
    package static let statuses = ["kept", "probed", "dropped-short", "invalid", "beyond-limit", "not-probed"]

    /// The report's word for it.
    package var status: String {
        switch self {
        case .kept: return "kept"
        case .leftOutBySize: return "beyond-limit"
        case .probed: return "probed"
        case .notProbed: return "not-probed"
        case let .dropped(reason):
            switch reason {
            case .tooShort, .noFrame: return "dropped-short"
            case .invalid: return "invalid"
            case .beyondLimit: return "beyond-limit"
            }
        }
    }

    /// Why it is not in the output, if it is not, as the report's JSON says it.
    package var reason: String? { reason(naming: .commandLine) }

    /// The same, naming options as the door the job came in by does.
    package func reason(naming: OptionNaming) -> String? {
        switch self {
        case .kept, .probed, .notProbed: return nil
        case .leftOutBySize: return "left out: the output reached its \(naming.word("max-size")) before this clip"
        // Not "skipped: ...": without --skip-invalid it stopped the run.
        case let .dropped(.invalid(why)): return why
        case let .dropped(reason): return reason.message
        }
    }

    /// The plan's clip for it, when the run got as far as using it.
    package var planned: PlannedClip? {
        switch self {
        case let .kept(planned, _), let .leftOutBySize(planned): return planned
        case .probed, .dropped, .notProbed: return nil
        }
    }
}

extension MergePlan {
    /// Each input's outcome, in input order, given the output written (nil: none) and whether
    /// this was a dry run (whose plan holds its clips though nothing was written).
    package func outcomes(output: OutputSummary?, dryRun: Bool) -> [InputOutcome] {
        inputs.map { input in
            switch input.disposition {
            case let .kept(index):
                guard output != nil || dryRun else { return .probed }
                return outcome(of: clips[index], output: output)
            case let .dropped(reason): return .dropped(reason)
            case .notProbed: return .notProbed
            }
        }
    }

    /// A kept clip against the output: the output may have ended (--max-size) before or inside it.
    private func outcome(of planned: PlannedClip, output: OutputSummary?) -> InputOutcome {
        var slot = InputOutcome.Slot(
            startMicros: planned.startMicros, heldMicros: planned.endMicros - planned.startMicros,
            cutAtMicros: planned.isCut ? planned.trimStartMicros + planned.durationMicros : nil,
            cutBy: planned.isCut ? .maxDuration : nil)
        if let output, output.truncation == .maxSize, planned.endMicros > output.durationMicros {
            slot.heldMicros = max(0, output.durationMicros - planned.startMicros)
            guard slot.heldMicros > 0 else { return .leftOutBySize(planned) }
            slot.cutAtMicros = planned.trimStartMicros + slot.heldMicros
            slot.cutBy = .maxSize
        }
        return .kept(planned, slot)
    }
}
