// swift-tools-version:6.0
// SPDX-License-Identifier: Apache-2.0 (vmerge's own source: LICENSE; README.md "Licence" says what
// the linked FFmpeg build means for a distributed binary). Source files carry no headers.
import PackageDescription

let package = Package(
    name: "vmerge",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "vmerge", targets: ["vmerge"]),
        // The Swift API: describe a merge, run it with async/await, follow its progress, get its
        // report. Everything else in the package is `package`, not public.
        .library(name: "VMerge", targets: ["VMerge"]),
    ],
    targets: [
        // FFmpeg's C libraries, found with pkg-config; the shim header hides macros and
        // version differences (5.1 / 6.x / 7.x) from Swift.
        .systemLibrary(
            name: "CFFmpeg",
            pkgConfig: "libavformat",
            providers: [
                .apt([
                    "libavformat-dev", "libavcodec-dev", "libavfilter-dev",
                    "libswscale-dev", "libswresample-dev", "libavutil-dev",
                ]),
                .brew(["ffmpeg"]),
            ]
        ),
        // C that Swift cannot express: the async-signal-safe cancellation flag (SIGINT/SIGTERM)
        // and the bridge for FFmpeg's va_list log callback; AVIO contexts on file descriptors.
        .target(name: "CVMergeSupport", dependencies: ["CFFmpeg"]),
        // POSIX calls Swift cannot reach on every platform (renameat2 / renameatx_np, openat).
        .target(name: "CVMergePOSIX"),
        // libavutil alone, for its hashes (the job keys' SHA-256, av_sha): what the pure logic may
        // use of FFmpeg, none of its media libraries.
        .systemLibrary(
            name: "CAVUtil",
            pkgConfig: "libavutil",
            providers: [.apt(["libavutil-dev"]), .brew(["ffmpeg"])]
        ),
        // Pure logic: options, orientation, geometry, timing, filter-graph strings, the safe-file
        // layer. Of FFmpeg only libavutil's hashes (CAVUtil), no decoding or muxing.
        .target(name: "VMergeCore", dependencies: ["CVMergePOSIX", "CAVUtil"]),
        // Everything that touches FFmpeg: owner types, probe, pipeline stages, writer.
        .target(name: "VMergeAV", dependencies: ["CFFmpeg", "CVMergeSupport", "VMergeCore"]),
        // Jobs: one merge with its report (shared by the command line, batch and watch), batch
        // runs, the watch folder with its claims and crash recovery.
        .target(
            name: "VMergeJobs",
            dependencies: ["VMergeAV", "VMergeRemote", "VMergeCore", "CVMergeSupport", "CVMergePOSIX"]),
        // PostgreSQL's client library, found with pkg-config (Homebrew's is keg-only: see the Makefile).
        .systemLibrary(
            name: "CLibPQ",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"]), .brew(["libpq"])]
        ),
        // The job queue in PostgreSQL (vmerge queue, vmerge worker): owner types for libpq's
        // connection and results, the schema and its migrations, adding, listing and claiming jobs.
        .target(name: "VMergeQueue", dependencies: ["CLibPQ", "VMergeJobs", "VMergeRemote", "VMergeAV", "VMergeCore"]),
        // libmicrohttpd, the dashboard's HTTP server, found with pkg-config; the shim header hides
        // the differences between 0.9.x (Debian 12) and 1.0 (Homebrew, Debian 13).
        .systemLibrary(
            name: "CMicroHTTPD",
            pkgConfig: "libmicrohttpd",
            providers: [.apt(["libmicrohttpd-dev"]), .brew(["libmicrohttpd"])]
        ),
        // libcurl, vmerge's one HTTP client (object storage with its SigV4 signing, https inputs),
        // found with pkg-config; the shim header passes setopt's variadic argument typed.
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"]), .brew(["curl"])]
        ),
        // Files that are not on this machine: the HTTP client's owner types over libcurl, the AWS
        // credential chain, S3's requests (signed by libcurl), and https/s3 names.
        .target(name: "VMergeRemote", dependencies: ["CCurl", "CAVUtil", "VMergeCore"]),
        // vmerge dashboard: the HTTP server's owner type, the page, Prometheus's text format and the
        // queue's metrics.
        .target(
            name: "VMergeWeb", dependencies: ["CMicroHTTPD", "VMergeQueue", "VMergeJobs", "VMergeRemote", "VMergeCore"]),
        // The public Swift API (MergeJob, MergeSession, MergeReport) over the job runner's
        // MergeRun, the one the command line's merge runs too.
        .target(name: "VMerge", dependencies: ["VMergeJobs", "VMergeAV", "VMergeCore"]),
        // Argument parsing, help, messages, exit codes.
        .target(
            name: "VMergeCLI",
            dependencies: ["VMergeJobs", "VMergeQueue", "VMergeWeb", "VMergeRemote", "VMergeAV", "VMergeCore"]),
        .executableTarget(name: "vmerge", dependencies: ["VMergeCLI"]),
        // libFuzzer target (make fuzz): bytes through probe and a short merge by the job runner.
        .executableTarget(
            name: "vmerge-fuzz", dependencies: ["VMergeJobs", "VMergeAV", "VMergeCore"], path: "Sources/VMergeFuzz"),
        // The example program of the README's "Use from Swift": the public API only.
        .executableTarget(name: "vmerge-example", dependencies: ["VMerge"], path: "Examples/MergeClips"),
        // What the test targets share: running a program (the built vmerge, ffmpeg), finding the
        // build's products and the fixtures, scratch folders that go when their test passes, and
        // reading media back through libavformat (MediaInspector).
        .target(name: "TestSupport", dependencies: ["CFFmpeg"], path: "Tests/TestSupport"),
        .testTarget(name: "VMergeAPITests", dependencies: ["VMerge", "VMergeCore", "TestSupport"]),
        .testTarget(name: "VMergeCoreTests", dependencies: ["VMergeCore"]),
        // In-process tests of the FFmpeg layer on real media: probing, planning, decoding, merging
        // through the job runner (no vmerge process).
        .testTarget(name: "VMergeAVTests", dependencies: ["VMergeAV", "VMergeCore", "VMergeJobs", "TestSupport"]),
        // In-process tests of jobs: the runner, cancel tokens, output rules, source removal, the
        // watch folder's parts.
        .testTarget(name: "VMergeJobsTests", dependencies: ["VMergeJobs", "VMergeAV", "VMergeCore", "TestSupport"]),
        // Snapshots/: help texts the tests read by path (#filePath), not resources of the bundle.
        .testTarget(
            name: "VMergeCLITests",
            dependencies: ["VMergeCLI", "VMergeQueue", "VMergeJobs", "VMergeCore", "TestSupport"],
            exclude: ["Snapshots"]),
        // Prometheus's text format, listen addresses, HTML escaping: no server, no database.
        .testTarget(
            name: "VMergeWebTests",
            dependencies: ["VMergeWeb", "VMergeQueue", "VMergeJobs", "VMergeCore", "TestSupport"]),
        // The job queue against a real PostgreSQL server that the tests start (PostgresServer.swift).
        // The dashboard's process tests live here too, next to the server they start.
        .testTarget(
            name: "QueueTests",
            dependencies: [
                "VMergeQueue", "VMergeWeb", "CMicroHTTPD", "VMergeCLI", "VMergeJobs", "VMergeAV", "VMergeCore",
                "TestSupport",
            ],
            // A pipeline's script the tests run (api_end_to_end.py), not a resource.
            exclude: ["Scripts"]),
        // Object storage and https against real servers the tests start: an S3-protocol server that
        // checks signatures (moto's, in a virtualenv the Makefile makes) and nginx with a CA of the
        // tests' own (RemoteServers/).
        .testTarget(
            name: "RemoteTests",
            dependencies: ["VMerge", "VMergeRemote", "VMergeJobs", "VMergeAV", "VMergeCore", "TestSupport"],
            exclude: ["Servers"]),
        // Process tests: each runs the built `vmerge` binary (merge, batch, watch) and reads what it
        // wrote; the library's own types only to check a file (Probe) or to name one.
        .testTarget(
            name: "IntegrationTests",
            dependencies: ["VMergeAV", "CFFmpeg", "VMergeCore", "TestSupport"]),
    ]
)
