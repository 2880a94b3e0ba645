/// Bytes that are read by position but are not a file on this machine: an object in a bucket or an
/// https resource, fetched as the demuxer asks for them. FFmpeg reads one through an AVIOContext
/// (`InputFile(source:)`), never through a URL of its own, so every remote byte comes through
/// vmerge's one HTTP client.
package protocol RandomAccessSource: AnyObject, Sendable {
    /// How the source is named in messages and reports (`s3://bucket/key`, an https URL with its
    /// query shown as `?…`).
    var displayName: String { get }
    /// Its size when it was first seen; a source that changes later fails its reads.
    var size: Int64 { get }
    /// Reads up to `buffer.count` bytes at `offset`: the count read, 0 at the end.
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int
}
