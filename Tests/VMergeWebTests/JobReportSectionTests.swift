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

    /// A job with renditions lists each of its files, its own first, as the report's `outputs` has them.
    func testAJobWithRenditionsListsEachOfItsFiles() {
        let report = """
            {"status": "ok", "inputs": [], "output": {"written": true, "duration": 3.0, "bytes": 1000},
             "outputs": [
              {"rendition": null, "path": "/out/trip.mp4", "written": true, "bytes": 1000, "duration": 3.0, "width": 320, "height": 240},
              {"rendition": "9x16-1080", "path": "/out/<b>-9x16-1080.mp4", "written": true, "bytes": 2097152, "duration": 3.0, "width": 1080, "height": 1920},
              {"rendition": "1x1-720", "path": "/out/trip-1x1-720.mp4", "written": false, "bytes": null, "duration": 3.0, "width": 720, "height": 720}]}
            """
        let html = JobReportSection.outcomes(report).joined(separator: "\n")
        XCTAssertTrue(
            html.contains(
                "<tr><td class=\"name\">/out/trip.mp4</td><td>its own video</td><td>320x240</td><td>0:03, 1000 B</td></tr>"
            ),
            html)
        XCTAssertTrue(
            html.contains(
                "<tr><td class=\"name\">/out/&lt;b&gt;-9x16-1080.mp4</td><td>9x16-1080</td><td>1080x1920</td>"
                    + "<td>0:03, 2.0 MiB</td></tr>"), html)
        XCTAssertTrue(html.contains("<td>1x1-720</td><td>720x720</td><td>not written</td>"), html)
        // One file: no table.
        XCTAssertFalse(
            JobReportSection.outcomes(#"{"status": "ok", "outputs": [{"path": "a.mp4", "written": true}]}"#)
                .joined().contains("renditions"))
    }
}
