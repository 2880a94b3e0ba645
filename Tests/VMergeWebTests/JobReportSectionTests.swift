import XCTest

@testable import VMergeWeb

/// A job page says what its last attempt did without JSON: each input's outcome and why, what was
/// made, and the error with what to do; every value from the report as text.
final class JobReportSectionTests: XCTestCase {
    func testAFailedAttemptSaysEachInputsOutcomeAndWhatToDo() {
        let report = """
            {"status": "nothing_to_merge", "inputs": [
              {"path": "/in/<script>.mov", "status": "dropped-short", "reason": "dropped: video lasts 0.5 s, under the 2 s minimum"},
              {"path": "https://h.example/c.mov?X-Amz-Signature=secret", "status": "invalid", "reason": "not a video"}],
             "output": null, "error": {"file": null, "message": "nothing to merge: every input was dropped"}}
            """
        let html = JobReportSection.outcomes(report).joined(separator: "\n")
        XCTAssertTrue(
            html.contains(
                "<tr><td class=\"name\">/in/&lt;script&gt;.mov</td><td><span class=\"outcome-dropped-short\">"
                    + "dropped-short</span></td><td>dropped: video lasts 0.5 s, under the 2 s minimum</td></tr>"), html)
        XCTAssertTrue(html.contains("https://h.example/c.mov?…"), html)
        XCTAssertFalse(html.contains("secret"), html)
        XCTAssertFalse(html.contains("<script>"), html)
        XCTAssertFalse(html.contains("output-made"), "nothing was made")
        XCTAssertTrue(
            html.contains("<p class=\"down\" id=\"report-error\">nothing to merge: every input was dropped</p>"))
        XCTAssertTrue(html.contains("lower --min-duration"), html)
        XCTAssertEqual(JobReportSection.outcomes("not json"), [])
    }
}
