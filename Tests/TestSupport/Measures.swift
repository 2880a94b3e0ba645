import Foundation

/// Duration of a file's video as decoded (last frame's time + one frame - first), measured
/// independently of vmerge's probe.
public func decodedVideoDuration(_ path: String) throws -> Double {
    let times = try MediaInspector(path: path).videoFrames().times.sorted()
    guard let first = times.first, let last = times.last, times.count > 1 else { return 0 }
    let frame = (last - first) / Double(times.count - 1)
    return last + frame - first
}

/// Where each 1 kHz tone of amplitude 0.5 (the sync and trim fixtures') starts, in seconds: the
/// middle of the first 32-sample window whose mean power reaches a quarter of the tone's (half
/// its amplitude), at least half a second after the previous onset. The window's centre lands
/// within a fraction of a millisecond of the true onset even with AAC's smearing of the edge
/// (0.18 ms measured on an unmoved tone).
public func toneOnsets(in samples: [Float], rate: Int) -> [Double] {
    let window = 32
    let threshold = Double(0.5 / 2.0.squareRoot() / 2) * Double(0.5 / 2.0.squareRoot() / 2)
    var sums = [Double](repeating: 0, count: samples.count + 1)
    for (i, s) in samples.enumerated() { sums[i + 1] = sums[i] + Double(s) * Double(s) }
    var found: [Double] = []
    var last = Int.min / 2
    var i = 0
    while i + window < samples.count {
        if (sums[i + window] - sums[i]) / Double(window) > threshold && i - last > rate / 2 {
            found.append(Double(i + window / 2) / Double(rate))
            last = i
        }
        i += 1
    }
    return found
}

/// The source frame number each output frame of `path` shows, for the trim and high-frame-rate
/// fixtures (t1, u1-u5) whose pictures carry their number as an 8-bit bar code: bit b is the
/// 40-pixel column b of the 320-pixel output, white for 1; nil where a column is neither black
/// nor white.
public func barCodeFrameNumbers(_ path: String) throws -> [Int?] {
    try MediaInspector(path: path).lumaRows(120).map { row in
        var number = 0
        for bit in 0..<8 {
            let luma = Int(row[bit * 40 + 20])
            if luma > 180 { number |= 1 << bit } else if luma > 70 { return nil }
        }
        return number
    }
}

/// The mean PSNR of two files per plane and their average, over every frame, from ffmpeg's psnr
/// filter (`.infinity` where the pictures are the same). `graph`: the filter graph ending in psnr,
/// when the inputs need work first (a reference made from a source); by default the first input's
/// video against the second's.
public func ffmpegPSNR(
    _ a: String, _ b: String, in directory: URL, graph: String = "[0:v][1:v]psnr"
) throws -> (y: Double, u: Double, v: Double, average: Double) {
    let arguments = ["-hide_banner", "-nostdin", "-i", a, "-i", b, "-lavfi", graph, "-f", "null", "-"]
    let run = try runTool("ffmpeg", arguments, in: directory)
    guard run.status == 0, let line = run.stderr.split(separator: "\n").first(where: { $0.contains("PSNR y:") })
    else { throw FFmpegCLIError(arguments: arguments, message: run.stderr) }
    let value = { (name: String) -> Double in
        guard let field = line.split(separator: " ").first(where: { $0.hasPrefix(name + ":") }) else { return .nan }
        return Double(field.dropFirst(name.count + 1)) ?? .infinity  // "inf"
    }
    return (value("y"), value("u"), value("v"), value("average"))
}
