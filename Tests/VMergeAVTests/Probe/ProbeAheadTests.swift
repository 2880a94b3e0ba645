import Foundation
import TestSupport
import VMergeAV
import VMergeCore
import XCTest

/// Inputs are probed a few ahead of the plan (issue 36), yet the plan decides as if they were
/// probed one by one: over seeded random lists of good, short and broken files, with and without
/// --skip-invalid and --max-duration, every input's probe outcome and the error that stops the
/// plan are what probing in turn gives.
final class ProbeAheadTests: XCTestCase {
    private enum Expected: Equatable {
        case clip, invalid, notProbed
    }

    func testThePlanDecidesAsIfEveryInputWereProbedInTurn() throws {
        let pool = ["a_", "c_", "e_", "i_", "l_tiny", "bad_text", "bad_empty", "bad_truncated"].map(Fixtures.path)
        // What each file is when probed alone: a clip of this duration, or invalid.
        var alone: [String: Int64?] = [:]
        for path in pool {
            alone.updateValue((try? Probe.clip(at: path))?.0.durationMicros, forKey: path)
        }
        XCTAssertEqual(alone.values.filter { $0 == nil }.count, 3, "the three bad files are invalid")
        for seed in UInt64(1)...40 {
            var random = SeededRandom(state: seed)
            let paths = (0..<(1 + random.below(8))).map { _ in random.pick(pool) }
            var options = MergeOptions()
            options.skipInvalid = random.chance(0.5)
            options.minDuration = random.pick([0, 2])
            options.maxDuration = random.chance(0.5) ? Double(1 + random.below(10)) : nil

            // In turn: stop at the first invalid input (unless skipped) or once --max-duration is held.
            var expected = paths.map { _ in Expected.notProbed }
            var stoppedBy: String?
            var kept: Int64 = 0
            for (index, path) in paths.enumerated() {
                if let limit = options.maxDurationMicros, kept >= limit { break }
                guard let duration = alone[path] ?? nil else {
                    expected[index] = .invalid
                    if options.skipInvalid { continue }
                    stoppedBy = path
                    break
                }
                expected[index] = .clip
                if options.isLongEnough(duration) { kept += duration }
            }

            var probes: [InputProbe] = []
            var thrown: Error?
            do {
                _ = try Merger(options: options, diagnostics: .silent).makePlan(probing: paths, into: &probes)
            } catch {
                thrown = error
            }
            let got = probes.map { probe -> Expected in
                switch probe {
                case .clip: return .clip
                case .invalid: return .invalid
                case .notProbed: return .notProbed
                }
            }
            let names = paths.map { URL(fileURLWithPath: $0).lastPathComponent }
            XCTAssertEqual(got, expected, "seed \(seed): \(names), \(options.skipInvalid), \(String(describing: options.maxDuration))")
            XCTAssertEqual(probes.map(\.path), paths, "seed \(seed)")
            if let stoppedBy {
                guard case let .invalidInput(file, _)? = thrown as? VMergeError else {
                    XCTFail("seed \(seed): expected the plan to stop at \(stoppedBy), got \(String(describing: thrown))")
                    continue
                }
                XCTAssertEqual(file, stoppedBy, "seed \(seed)")
            } else if let thrown, case .invalidInput? = thrown as? VMergeError {
                XCTFail("seed \(seed): stopped by \(thrown) though no input should stop it")
            }
        }
    }
}
