import Foundation
import XCTest

@testable import VMergeCore

final class ProgressTests: XCTestCase {
    func testFractionSpeedAndETA() {
        var p = MergeProgress(
            phase: .encoding, item: 2, itemCount: 4, file: "b.mov", doneMicros: 10_000_000, totalMicros: 40_000_000,
            elapsedSeconds: 2)
        XCTAssertEqual(p.fraction, 0.25)
        XCTAssertEqual(p.speed, 5)
        XCTAssertEqual(p.etaSeconds, 6)
        XCTAssertEqual(
            p.json.text(),
            #"{"phase":"encoding","clip":2,"clips":4,"file":"b.mov","percent":25,"out_time":10,"total_time":40,"#
                + #""elapsed":2,"total_size":0,"speed":5,"eta":6,"progress":"continue"}"#)
        p.outputBytes = 123_456
        XCTAssertTrue(p.json.text().contains(#""total_size":123456,"#))
        p.elapsedSeconds = 0.1
        XCTAssertNil(p.speed, "too early to tell")
        XCTAssertNil(p.etaSeconds)
        p.phase = .probing
        XCTAssertEqual(p.fraction, 0)
        p.phase = .done
        XCTAssertEqual(p.fraction, 1)
        XCTAssertEqual(p.etaSeconds, 0)
        XCTAssertTrue(p.json.text().hasSuffix(#""progress":"end"}"#))
    }
}
