/// The text of `vmerge --help`, built from the option table.
enum Help {
    static let version = "0.1.0"

    static var text: String {
        var lines = [
            "OVERVIEW: Merge phone video clips into one small, upright, web-ready MP4.",
            "",
            "Clips are joined in the order given. Each is turned upright from its rotation/mirror",
            "matrix, centre-cropped to the output aspect, scaled, and encoded as H.264 + AAC in an",
            "MP4 with its index at the front (plays while it downloads). Clips shorter than",
            "--min-duration are dropped; a clip without sound contributes silence.",
            "",
            "USAGE: vmerge [options] <input>... -o <output>",
            "",
            "ARGUMENTS:",
            "  <input>                 Video files (.mov, .mp4, ...), merged in this order.",
            "",
            "OPTIONS:",
        ]
        for spec in OptionSpec.all {
            let name = "  " + spec.display
            let pad =
                name.count < 26
                ? String(repeating: " ", count: 26 - name.count) : "\n" + String(repeating: " ", count: 26)
            lines.append(name + pad + wrap(spec.help, width: 70, indent: 26))
        }
        lines += [
            "",
            "EXIT STATUS:",
            "  0    the output was written",
            "  1    processing error (unreadable input, encoding or disk error); no output is left",
            "  2    usage error (unknown option, bad value, missing argument)",
            "  3    nothing to merge: every clip was dropped",
            "  130  interrupted (SIGINT); 143 terminated (SIGTERM); no output is left",
            "",
            "EXAMPLES:",
            "  vmerge a.mov b.mov c.mov -o out.mp4",
            "  vmerge --min-duration 0 --quality high clips/*.mov -o out.mp4 -y",
        ]
        return lines.joined(separator: "\n") + "\n"
    }

    /// Wraps `text` to `width` columns, continuation lines indented by `indent`.
    private static func wrap(_ text: String, width: Int, indent: Int) -> String {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ") {
            if !line.isEmpty && line.count + 1 + word.count > width {
                lines.append(line)
                line = ""
            }
            line += (line.isEmpty ? "" : " ") + word
        }
        if !line.isEmpty { lines.append(line) }
        return lines.joined(separator: "\n" + String(repeating: " ", count: indent))
    }
}
