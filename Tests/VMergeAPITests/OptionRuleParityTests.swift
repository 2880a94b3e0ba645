import Foundation
import TestSupport
import VMerge
import XCTest

/// The API accepts exactly what `vmerge` accepts: over seeded random values near and across each
/// rule's edges, a typed property is refused (`validate()`) exactly when the command line refuses
/// the same value as text (exit 2, naming the option), one option at a time.
final class OptionRuleParityTests: XCTestCase {
    private struct Case {
        var option: String
        var text: String
        var set: (inout MergeJob) -> Void
    }

    private func randomCase(_ random: inout SeededRandom) -> Case {
        func decimal(_ range: ClosedRange<Double>, places: Int) -> Double {
            let scale = pow(10, Double(places))
            return ((range.lowerBound + random.unit() * (range.upperBound - range.lowerBound)) * scale).rounded() / scale
        }
        // Plain decimals as Swift writes them, so the text is the value the property holds.
        func text(_ value: Double) -> String { value == value.rounded() ? String(Int(value)) : "\(value)" }
        switch random.below(6) {
        case 0:
            let width = random.pick([-2, 0, 14, 15, 16, 17, 7679, 7680, 7681, 7682]) + random.below(3) * 2
            return Case(option: "width", text: "\(width)") { $0.width = width }
        case 1:
            let rate = random.chance(0.3)
                ? random.pick([0.5, 1, 23.976, 29.97, 59.94, 240, 240.0004, 240.2, 241, -30])
                : decimal(-5...260, places: random.below(4))
            return Case(option: "fps", text: text(rate)) { $0.frameRate = rate }
        case 2:
            let crf = random.chance(0.3) ? random.pick([-0.01, 0, 51, 51.01, 20.5, 20.125]) : decimal(-2...55, places: random.below(4))
            return Case(option: "crf", text: text(crf)) { $0.crf = crf }
        case 3:
            let (w, h) = (random.below(24) - 3, random.below(24) - 3)
            return Case(option: "aspect", text: "\(w):\(h)") { $0.aspect = MergeJob.Aspect(width: w, height: h) }
        case 4:
            let lufs = random.chance(0.3) ? random.pick([-70, -70.5, -1, -0.9, -16]) : decimal(-90...5, places: random.below(3))
            return Case(option: "loudness", text: text(lufs)) { $0.loudness = lufs }
        default:
            let bytes = Int64(random.pick([0, 1024, 16383, 16384, 16385, 1 << 30])) + Int64(random.below(3))
            return Case(option: "max-size", text: "\(bytes)") { $0.maxSize = bytes }
        }
    }

    func testTheAPIAcceptsWhatTheCommandLineAccepts() throws {
        let folder = try makeScratchDirectory()
        var random = SeededRandom(seed: 37)
        var refused = 0
        // Each rule's edges once, then seeded random values.
        let edges = [(-4, -3), (4, -3), (0, 3), (1, 10), (1, 11), (10, 1), (11, 1), (20000, 15000), (10001, 3)].map { w, h in
            Case(option: "aspect", text: "\(w):\(h)") { $0.aspect = MergeJob.Aspect(width: w, height: h) }
        }
        for index in 0..<(edges.count + 60) {
            let given = index < edges.count ? edges[index] : randomCase(&random)
            var job = MergeJob(inputs: [Fixtures.url("a_")], output: folder.appendingPathComponent("o.mp4"))
            given.set(&job)
            let apiRefuses: Bool
            do {
                try job.validate()
                apiRefuses = false
            } catch {
                apiRefuses = true
            }
            let run = try VMergeBinary.run(
                [Fixtures.path("a_"), "--\(given.option)=\(given.text)", "-n", "-o", "o.mp4"], in: folder)
            let cliRefuses = run.status == 2
            XCTAssertTrue(run.status == 0 || cliRefuses, "\(given.option) \(given.text): \(run.stderr)")
            if cliRefuses { XCTAssertTrue(run.stderr.contains("--\(given.option)"), run.stderr) }
            XCTAssertEqual(apiRefuses, cliRefuses, "--\(given.option) \(given.text): API and command line disagree")
            if cliRefuses { refused += 1 }
        }
        // Both sides of the rules were tried.
        XCTAssertGreaterThan(refused, 10)
        XCTAssertLessThan(refused, 55)
    }
}
