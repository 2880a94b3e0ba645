import XCTest

@testable import VMergeCore

/// Shapes at the edge of what can be made: each fails alone, with a reason, before any work.
final class DegenerateShapeTests: XCTestCase {
    /// A clip (or trimmed part) shorter than half an output frame takes no frame: dropped with a
    /// reason whatever --min-duration says, and the clips after it start where they would have.
    func testAClipUnderHalfAFrameIsDroppedWithAReason() {
        var options = MergeOptions()
        options.minDuration = 0
        let plan = MergePlan(
            probes: [
                .clip(makeClip("a.mov", micros: 1_000_000)), .clip(makeClip("blink.mov", micros: 16_000)),
                .clip(makeClip("t.mov", micros: 3_000_000)), .clip(makeClip("b.mov", micros: 17_000)),
            ],
            edits: [.whole, .whole, InputEdit(startMicros: 1_000_000, endMicros: 1_010_000), .whole], options: options)
        XCTAssertEqual(plan.clips.map(\.clip.path), ["a.mov", "b.mov"], "17 ms is over half of 33.3 ms: one frame")
        XCTAssertEqual(plan.clips[1].startMicros, 1_000_000)
        XCTAssertEqual(plan.clips[1].endMicros - plan.clips[1].startMicros, 33_333)
        XCTAssertEqual(
            plan.dropped.map(\.reason.message),
            [
                "dropped: video lasts 0.016 s, under half an output frame (0.017 s): no frame of the output would show it",
                "dropped: the trimmed part lasts 0.01 s, under half an output frame (0.017 s): no frame of the output "
                    + "would show it",
            ])
        // Nothing at all left: an empty plan (the run says "nothing to merge", exit 3).
        XCTAssertTrue(
            MergePlan(probes: [.clip(makeClip("blink.mov", micros: 10_000))], options: options).clips.isEmpty)
    }

    func testPicturesUnder2x2AreInvalidInputs() {
        for (w, h) in [(1, 240), (320, 1), (1, 1), (0, 0)] {
            XCTAssertEqual(
                Limits.problem(with: makeClip("x.mov", micros: 1_000_000, width: w, height: h), maxPixels: .max),
                "picture is \(w)x\(h): at least 2x2 pixels are needed to crop and scale it")
        }
        XCTAssertNil(Limits.problem(with: makeClip("x.mov", micros: 1_000_000, width: 2, height: 2), maxPixels: .max))
    }

    /// An output picture with a side over 16384, or too small for its fit, is refused with the options that made it.
    func testOutputShapesThatCannotBeMadeAreRefused() {
        func problem(width: Int, aspect: Rational, fit: Fit = .crop) -> String? {
            var settings = JobSettings()
            settings.merge.width = width
            settings.merge.aspect = aspect
            settings.merge.fit = fit
            do {
                try settings.validate()
                return nil
            } catch {
                return error.description
            }
        }
        XCTAssertEqual(
            problem(width: 7680, aspect: Rational(1, 10)),
            "'--width 7680' with '--aspect 1:10' makes a 7680x76800 picture: each side must be 2 to 16384 pixels")
        XCTAssertNil(problem(width: 16, aspect: Rational(8, 1)), "16x2 can be cropped or padded")
        XCTAssertEqual(
            problem(width: 16, aspect: Rational(8, 1), fit: .blur),
            "'--width 16' with '--aspect 8:1' makes a 16x2 picture: each side must be 4 to 16384 pixels with "
                + "'--fit blur'")
        XCTAssertNil(problem(width: 16, aspect: Rational(4, 1), fit: .blur), "16x4 can be blurred")
        XCTAssertNil(problem(width: 7680, aspect: Rational(4, 3)), "7680x5760 can be made (slowly)")
        XCTAssertNil(problem(width: 7680, aspect: Rational(10, 21)), "7680x16128")
        XCTAssertNotNil(problem(width: 7680, aspect: Rational(2, 5)), "7680x19200")
    }

    /// Large outputs are estimated at the measured rate; the warning's threshold is 10 minutes.
    func testEncodeTimeEstimate() {
        var options = MergeOptions()
        options.width = 3840
        // 60 s x 30 frames of 3840x2880 at 30 Mpixel/s: 663.552 s.
        XCTAssertEqual(options.encodeSecondsEstimate(forOutputSeconds: 60), 663.552, accuracy: 1e-6)
        options.width = 320
        XCTAssertLessThan(options.encodeSecondsEstimate(forOutputSeconds: 3600), 600, "an hour at 320x240")
        XCTAssertEqual(formatDuration(663.552), "11 min")
        XCTAssertEqual(formatDuration(11_520), "3.2 hours")
    }

    /// Chapters as both of an MP4's lists hold them: 255 at most (the last spanning the rest),
    /// titles in 255 bytes cut between characters.
    func testChaptersFitBothLists() {
        let many = (0..<300).map {
            Chapter(title: "clip\($0)", startMicros: Int64($0) * 1_000_000, endMicros: Int64($0 + 1) * 1_000_000)
        }
        let fitted = Chapter.fitted(many)
        XCTAssertEqual(fitted.count, 255)
        XCTAssertEqual(Array(fitted.prefix(254)), Array(many.prefix(254)))
        XCTAssertEqual(fitted[254], Chapter(title: "clip254 (+45 more)", startMicros: 254_000_000, endMicros: 300_000_000))
        XCTAssertEqual(Chapter.fitted(Array(many.prefix(255))), Array(many.prefix(255)), "255 fit as they are")

        // Multi-byte characters, an emoji of several scalars, a combining accent: never split.
        for unit in ["é", "👩‍👩‍👧", "e\u{301}", "a"] {
            let long = String(repeating: unit, count: 300)
            let cut = Chapter.cut(long, toBytes: 255)
            XCTAssertLessThanOrEqual(cut.utf8.count, 255, unit)
            XCTAssertTrue(cut.hasSuffix("\u{2026}"), unit)
            let kept = cut.dropLast()
            XCTAssertTrue(kept.allSatisfy { String($0) == unit }, "whole characters of \(unit)")
            XCTAssertGreaterThan(kept.utf8.count + 3 + String(unit).utf8.count, 255, "as much as fits")
        }
        XCTAssertEqual(Chapter.cut("short", toBytes: 255), "short")
        // File names may hold control characters; chapter titles never do.
        XCTAssertEqual(
            Chapter.fitted([Chapter(title: "a\nb\u{1B}[31mc\td\u{85}e", startMicros: 0, endMicros: 1)]).first?.title,
            "a b [31mc d e")
        let last = Chapter.fitted(
            many.prefix(254) + [Chapter(title: String(repeating: "é", count: 200), startMicros: 254_000_000, endMicros: 1)]
                + many.suffix(10))
        XCTAssertTrue(last[254].title.hasSuffix("\u{2026} (+10 more)"), last[254].title)
        XCTAssertLessThanOrEqual(last[254].title.utf8.count, 255)
    }
}
