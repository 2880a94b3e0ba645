// vmerge's fuzz target: arbitrary bytes through the job-file and option parsers (as a job list,
// a job.json and option values), then through probe (read from memory by a custom AVIOContext)
// and, when they probe as a clip, a short merge. Built by `make fuzz` with libFuzzer
// (-sanitize=fuzzer); a plain `swift build` makes a stub that says so.
import Foundation
import VMergeAV
import VMergeCore
import VMergeJobs

/// The parsers a job's producer reaches: a job list, a job.json, every option's value, an input
/// list. Errors are expected; a trap (an integer conversion, an index) is the bug.
func fuzzParsers(_ bytes: [UInt8]) {
    let text = String(decoding: bytes, as: UTF8.self)
    _ = try? JobList.parse(text, base: "/jobs", outputBase: "/out", file: "fuzz.jsonl")
    if let object = try? JobFile.object(from: Data(bytes)) {
        _ = try? JobFile.decode(object, over: JobSettings(), inputsRequired: false, outputRequired: false)
    }
    for line in text.split(separator: "\n", omittingEmptySubsequences: false).prefix(64) {
        var settings = JobSettings()
        for option in JobOption.all { try? option.apply(String(line), to: &settings) }
        try? settings.validate()
        _ = Rational(parsing: String(line), separators: [":", "/"])?.reduced
        _ = ByteSize.parse(String(line))
    }
    _ = InputList.parse(text)
}

/// One input: every error is expected; a crash, hang or leak is what libFuzzer looks for.
func fuzzOne(_ bytes: [UInt8]) {
    fuzzParsers(bytes)
    guard case let .some((clip, _)) = try? Probe.clip(memory: bytes, name: "fuzz-input") else { return }
    // Keep each run short: hostile headers may claim hours (Limits refuses more than 24 h).
    guard Limits.problem(with: clip, maxPixels: 4096 * 4096) == nil else { return }
    let folder = FileManager.default.temporaryDirectory.path
    let token = "\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    let input = "\(folder)/vmerge-fuzz-\(token).mov", output = "\(folder)/vmerge-fuzz-\(token).mp4"
    defer {
        unlink(input)
        unlink(output)
    }
    guard FileManager.default.createFile(atPath: input, contents: Data(bytes)) else { return }
    var options = MergeOptions()
    options.minDuration = 0
    options.width = 64
    options.maxDuration = 0.5
    options.overwrite = true
    // The product's own path: the job runner, as `vmerge in.mov -o out.mp4 -y` runs it.
    let job = Job(name: "fuzz", inputs: [input], output: FileName(output), options: options)
    _ = JobRunner(.merge(recordsKey: false, remakesDone: true, report: nil), diagnostics: .silent).run(job)
}

VMergeProcess.silenceFFmpeg()

#if VMERGE_FUZZ
    @_silgen_name("LLVMFuzzerRunDriver")
    func LLVMFuzzerRunDriver(
        _ argc: UnsafeMutablePointer<Int32>,
        _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
        _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
    ) -> Int32

    /// libFuzzer looks for this symbol even when driven through LLVMFuzzerRunDriver.
    @_cdecl("LLVMFuzzerTestOneInput")
    public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
        fuzzOne(data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [])
        return 0
    }

    var argc = CommandLine.argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
    exit(
        LLVMFuzzerRunDriver(&argc, &argv) { data, size in
            fuzzOne(data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [])
            return 0
        })
#else
    // Without libFuzzer: run the given files once each (reproduces a crash found earlier).
    let files = CommandLine.arguments.dropFirst()
    if files.isEmpty {
        FileHandle.standardError.write(Data("vmerge-fuzz: build with 'make fuzz'; or pass files to replay\n".utf8))
        exit(2)
    }
    for file in files {
        guard let data = FileManager.default.contents(atPath: file) else { continue }
        fuzzOne([UInt8](data))
        print("ok \(file)")
    }
#endif
