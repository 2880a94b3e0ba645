import Foundation
import VMergeCore
import VMergeJobs
import XCTest

@testable import VMergeQueue

/// A job through its spec and back is the same job: same key, same options in force.
final class JobSpecTests: XCTestCase {
    /// Renditions go through the spec as the command line writes them, and key the job.
    func testRenditionsSurviveTheSpecAndKeyTheJob() throws {
        var job = Job(name: "trip", inputs: ["/in/a.mov"], output: "/out/trip.mp4", options: MergeOptions())
        let plain = JobSpec.key(of: job)
        for text in ["9x16-1080", "1x1-720:crf=20.5:fit=blur:preset=slow=sq.mp4", "640x360"] {
            guard case let .success(rendition) = Rendition.parse(text) else { return XCTFail(text) }
            job.options.renditions.append(rendition)
        }
        let back = try JobSpec.job(from: JobSpec.json(of: job).text(), file: "job 1")
        XCTAssertEqual(back.options.renditions, job.options.renditions)
        XCTAssertEqual(JobSpec.key(of: back), JobSpec.key(of: job))
        XCTAssertNotEqual(JobSpec.key(of: job), plain, "a job with renditions is another job")
        XCTAssertFalse(
            JobSpec.json(of: Job(name: "t", inputs: ["/a.mov"], output: "/t.mp4", options: MergeOptions())).text()
                .contains("renditions"), "a job without renditions keeps the spec older workers read")
    }

    func testEveryOptionSurvivesTheSpec() throws {
        var settings = JobSettings()
        for (name, text) in [
            ("min-duration", "0.5"), ("width", "640"), ("aspect", "16:9"), ("fit", "blur"), ("fps", "30000/1001"),
            ("quality", "high"), ("crf", "20.5"), ("preset", "slow"), ("tonemap", "hable"),
            ("skip-deblocking", "always"), ("loudness", "-16"),
            ("chapters", "true"), ("poster", "p.jpg"), ("poster-at", "1.5"), ("skip-invalid", "true"),
            ("strict", "true"), ("strip-metadata", "true"), ("max-pixels", "4096x4096"), ("max-duration", "60"),
            ("max-size", "160M"), ("min-free", "2G"),
        ] {
            try XCTUnwrap(JobOption.named(name), name).apply(text, to: &settings)
        }
        XCTAssertEqual(Set(JobOption.all.map(\.name)).count, 21, "a new option: add it above")
        let job = Job(
            name: "trip", inputs: [JobInput("/in/a.mov"), JobInput("/in/b.mov")], output: "/out/trip.mp4",
            settings: settings)
        let back = try JobSpec.job(from: JobSpec.json(of: job).text(), file: "job 1")
        XCTAssertEqual(back.name, "trip")
        XCTAssertEqual(back.inputs, job.inputs)
        XCTAssertEqual(back.output, job.output)
        XCTAssertEqual(back.minFree, job.minFree)
        var read = JobSettings()
        read.merge = back.options
        read.minFree = back.minFree
        for option in JobOption.all {
            XCTAssertEqual(option.value(in: read), option.value(in: settings), option.name)
        }
        XCTAssertEqual(JobSpec.key(of: back), JobSpec.key(of: job))
    }

    /// A spec's paths are held to the limit every door has, in the bytes of the name on disk: a
    /// path of 4,096 bytes that are not UTF-8 (16,384 as the spec's text) is read back, one byte
    /// longer is refused; before, a spec refused such a path from 1,024 bytes on.
    func testASpecPathIsMeasuredInItsBytes() throws {
        let limit = 4096
        func path(_ bytes: Int) -> String {
            FileName.decode([0x2F] + [UInt8](repeating: 0xFF, count: bytes - 5) + Array(".mov".utf8))
        }
        for length in [1273, limit, limit + 1] {
            let job = Job(name: "j", inputs: [path(length)], output: "/out/j.mp4", options: MergeOptions())
            let spec = JobSpec.json(of: job).text()
            if length <= limit {
                XCTAssertEqual(try JobSpec.job(from: spec, file: "job 1").inputs, job.inputs, "\(length)")
            } else {
                XCTAssertThrowsError(try JobSpec.job(from: spec, file: "job 1")) { error in
                    XCTAssertEqual(
                        "\(error)", "job 1: unusable job spec: an input is longer than 4096 bytes")
                }
            }
        }
    }

    /// An option added after the last queue schema change is left out of a spec at its default, so
    /// workers of the release before it, which refuse options they do not know, still run the job.
    func testANewerOptionAtItsDefaultIsLeftOutOfTheSpec() throws {
        var job = Job(name: "a", inputs: [JobInput("/a.mov")], output: "/a.mp4")
        XCTAssertFalse(JobSpec.json(of: job).text().contains("skip-deblocking"), JobSpec.json(of: job).text())
        job.options.skipDeblocking = .always
        XCTAssertTrue(
            JobSpec.json(of: job).text().contains(#""skip-deblocking":"always""#), JobSpec.json(of: job).text())
        let back = try JobSpec.job(from: JobSpec.json(of: job).text(), file: "job 1")
        XCTAssertEqual(back.options.skipDeblocking, .always)
    }

    /// Trims and titles, to the microsecond.
    func testInputEditsSurviveTheSpec() throws {
        let job = Job(
            name: "a",
            inputs: [
                JobInput(
                    "/a.mov",
                    edit: InputEdit(startMicros: 1_500_001, endMicros: 36_000_000_000, title: "Arrival \"gate\"")),
                JobInput("/b.mov"), JobInput("/c.mov", edit: InputEdit(endMicros: 8_000_000)),
            ], output: "/a.mp4")
        let back = try JobSpec.job(from: JobSpec.json(of: job).text(), file: "job 1")
        XCTAssertEqual(back.inputs, job.inputs)
        XCTAssertEqual(JobSpec.key(of: back), JobSpec.key(of: job))
        var untrimmed = job
        for index in untrimmed.inputs.indices { untrimmed.inputs[index].edit = .whole }
        XCTAssertNotEqual(JobSpec.key(of: untrimmed), JobSpec.key(of: job))
    }

    /// Values derived from others are kept as they were in force: --quality high with --crf 23 is
    /// not --quality high.
    func testDerivedValuesAreKept() throws {
        var settings = JobSettings()
        try JobOption.quality.apply("high", to: &settings)
        try JobOption.crf.apply("23", to: &settings)
        let job = Job(name: "a", inputs: [JobInput("/a.mov")], output: "/a.mp4", settings: settings)
        XCTAssertEqual(try JobSpec.job(from: JobSpec.json(of: job).text(), file: "job 1").options.effectiveCRF, 23)
        // Unset options are not in the spec at all.
        XCTAssertFalse(JobSpec.json(of: job).text().contains("max-size"))
    }

    /// The key names the output too: the same clips into two files are two jobs.
    func testTheKeyNamesTheOutput() {
        let a = Job(name: "a", inputs: ["/in/a.mov"], output: "/out/a.mp4", options: MergeOptions())
        var b = a
        b.output = "/out/b.mp4"
        XCTAssertNotEqual(JobSpec.key(of: a), JobSpec.key(of: b))
        var renamed = a
        renamed.name = "other"
        XCTAssertEqual(JobSpec.key(of: a), JobSpec.key(of: renamed))
    }

    func testARelativeJobIsMadeAbsolute() {
        let job = JobSpec.absolute(Job(name: "a", inputs: ["in/../a.mov"], output: "out.mp4", options: MergeOptions()))
        let here = FileManager.default.currentDirectoryPath
        XCTAssertEqual(job.inputPaths.map(\.escaped), [(here + "/a.mov" as NSString).standardizingPath])
        XCTAssertEqual(job.output.escaped, (here + "/out.mp4" as NSString).standardizingPath)
    }
}
