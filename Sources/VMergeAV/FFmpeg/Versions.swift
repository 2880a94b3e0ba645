import CFFmpeg

/// The FFmpeg libraries vmerge runs on, as "libavformat 59.27.100" lines.
package enum FFmpegVersions {
    package static var libraries: [(name: String, version: String)] {
        func text(_ v: UInt32) -> String { "\(v >> 16).\((v >> 8) & 0xff).\(v & 0xff)" }
        return [
            ("libavformat", text(avformat_version())), ("libavcodec", text(avcodec_version())),
            ("libavfilter", text(avfilter_version())), ("libavutil", text(avutil_version())),
            ("libswscale", text(swscale_version())), ("libswresample", text(swresample_version())),
        ]
    }

    /// FFmpeg's own release string, e.g. "5.1.6-0+deb12u1".
    package static var release: String { String(cString: av_version_info()) }
}
