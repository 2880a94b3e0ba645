import Foundation
import TestSupport
import XCTest

/// "A source is deleted only when every byte of it is in the output", as an invariant over
/// random container layouts (issue 44): MOV, MP4, fragmented MP4, Matroska and MPEG-TS files with
/// extra sound or subtitle tracks, timecodes, cover art, attachments, edit lists hiding the start
/// or end of the picture or the sound, trailers after the last box, `uuid`/`free`/`udta`/`meta`
/// boxes holding data or text, a second picture layer, sound running past the picture, data past
/// a sample table's entries, null transport packets that hold data. Each is
/// merged with --delete-sources; `ByteOracle` (ffprobe's packets and the test's own walk) then
/// judges the untouched copy: a deleted file must have every byte accounted for, and a file
/// whose every byte is accounted for must be deleted (so the test also fails when vmerge keeps
/// everything). A kept file says which bytes.
///
/// Seeded: VMERGE_LAYOUT_SEEDS=N layouts (default 30), VMERGE_LAYOUT_SEED=S the first.
final class ByteAccountingInvariantTests: XCTestCase {
    enum Container: String, CaseIterable { case mov, mp4, fmp4, mkv, ts }

    enum Extra: String, CaseIterable {
        case secondSound, subtitle, timecode, cover, attachment
        case hidePictureStart, hidePictureEnd, hideSoundStart, hideSoundEnd
        case trailer, uuidBox, freeWithData, freeZero, udtaText, udtaBinary, metaText, metaBinary, moovUserData
        case voidData, voidZero, secondLayer, longSound, tableTail, nullData

        /// Whether the extra can be made in `container`.
        func fits(_ container: Container) -> Bool {
            switch self {
            case .secondSound, .trailer, .longSound: return true
            case .subtitle: return container != .ts
            case .timecode: return container == .mov
            case .cover: return container == .mp4 || container == .mov
            case .attachment, .voidData, .voidZero: return container == .mkv
            case .nullData: return container == .ts
            case .hidePictureStart, .hidePictureEnd, .hideSoundStart, .hideSoundEnd, .secondLayer, .moovUserData, .tableTail:
                return container == .mov || container == .mp4
            case .uuidBox, .freeWithData, .freeZero, .udtaText, .udtaBinary, .metaText, .metaBinary:
                return container == .mov || container == .mp4 || container == .fmp4
            }
        }
    }

    struct Layout: CustomStringConvertible {
        var container: Container
        var extras: [Extra]
        var description: String { "\(container.rawValue) + [\(extras.map(\.rawValue).joined(separator: ", "))]" }
    }

    static func layout(seed: UInt64) -> Layout {
        var random = SeededRandom(state: seed &* 0x9E37_79B9_7F4A_7C15 | 1)
        let container = Container.allCases[Int(seed % UInt64(Container.allCases.count))]
        var extras: [Extra] = []
        // A quarter plain: those must be deleted.
        let count = random.chance(0.25) ? 0 : 1 + random.below(2)
        let fitting = Extra.allCases.filter { $0.fits(container) }
        while extras.count < count {
            let extra = random.pick(fitting)
            if !extras.contains(extra) { extras.append(extra) }
        }
        return Layout(container: container, extras: extras)
    }

    func testEveryDeletedSourceHasEveryByteInTheOutput() throws {
        let environment = ProcessInfo.processInfo.environment
        let count = environment["VMERGE_LAYOUT_SEEDS"].flatMap(Int.init) ?? 30
        let first = environment["VMERGE_LAYOUT_SEED"].flatMap(UInt64.init) ?? 1
        var deleted = 0, kept = 0
        for seed in first..<(first + UInt64(count)) {
            let layout = Self.layout(seed: seed)
            if try check(layout, context: "seed \(seed): \(layout)") { deleted += 1 } else { kept += 1 }
        }
        print("byte accounting invariant: \(count) layouts, \(deleted) deleted, \(kept) kept")
        if count >= 20 {
            XCTAssertGreaterThan(deleted, 0, "no layout was deleted")
            XCTAssertGreaterThan(kept, 0, "no layout was kept")
        }
    }

    /// The three files the hostile pass found deleted, each kept now and named by its bytes.
    func testAnAttachmentHiddenSoundAndATrailerKeepTheFile() throws {
        for (layout, said) in [
            (Layout(container: .mkv, extras: [.attachment]), "in its attachment 'track.gpx' are in no output"),
            (Layout(container: .mov, extras: [.hideSoundStart]), "of its sound (stream 1) that its edit list hides are in no output"),
            (Layout(container: .mov, extras: [.hideSoundEnd]), "of its sound (stream 1) that its edit list hides are in no output"),
            (Layout(container: .mp4, extras: [.trailer]), "after the last box are in no output"),
            (Layout(container: .mov, extras: [.uuidBox]), "in a 'uuid' box at the top level are in no output"),
        ] {
            let (deleted, stderr) = try merge(layout)
            XCTAssertFalse(deleted, "\(layout) was deleted")
            XCTAssertTrue(stderr.contains("vmerge: src.\(layout.container.fileExtension): kept: "), "\(layout): \(stderr)")
            XCTAssertTrue(stderr.contains(said), "\(layout): \(stderr)")
        }
    }

    // MARK: one layout

    /// Merges `layout` with --delete-sources and checks the outcome against the oracle; true when
    /// the source was deleted.
    private func check(_ layout: Layout, context: String) throws -> Bool {
        let (deleted, _) = try merge(layout, context: context) { pristine in
            var oracle = try ByteOracle(path: pristine)
            return oracle.account(container: layout.container == .fmp4 ? "mp4" : layout.container.rawValue)
        }
        return deleted
    }

    /// Makes the layout, merges it, and (with `oracle`) holds the outcome to the oracle's account.
    @discardableResult
    private func merge(
        _ layout: Layout, context: String? = nil, oracle: ((String) throws -> [(Range<Int64>, String)])? = nil
    ) throws -> (deleted: Bool, stderr: String) {
        let dir = try makeScratchDirectory()
        let layout = layout
        let context = context ?? layout.description
        let name = "src.\(layout.container.fileExtension)"
        try LayoutMaker(folder: dir).make(layout, as: "pristine-" + name)
        try FileManager.default.copyItem(
            at: dir.appendingPathComponent("pristine-" + name), to: dir.appendingPathComponent(name))
        let run = try VMergeBinary.run([name, "-o", "out.mp4", "--delete-sources", "--min-duration", "0.5"], in: dir)
        XCTAssertEqual(run.status, 0, "\(context): \(run.stderr)")
        let deleted = !FileManager.default.fileExists(atPath: dir.appendingPathComponent(name).path)
        if deleted {
            XCTAssertTrue(run.stderr.contains("vmerge: \(name): deleted"), "\(context): \(run.stderr)")
        } else {
            XCTAssertTrue(run.stderr.contains("vmerge: \(name): kept: "), "\(context) kept without a reason: \(run.stderr)")
        }
        if let oracle {
            let missing = try oracle(dir.appendingPathComponent("pristine-" + name).path)
            let shown = missing.prefix(3).map { "\($0.0.lowerBound)..<\($0.0.upperBound) \($0.1)" }.joined(separator: "; ")
            if deleted && !missing.isEmpty {
                XCTFail("\(context): deleted, but the oracle finds bytes in no output: \(shown)")
            } else if !deleted && missing.isEmpty {
                XCTFail("\(context): kept, though the oracle accounts for every byte: \(run.stderr)")
            }
        }
        return (deleted, run.stderr)
    }
}

extension ByteAccountingInvariantTests.Container {
    var fileExtension: String {
        switch self {
        case .mov: return "mov"
        case .mp4, .fmp4: return "mp4"
        case .mkv: return "mkv"
        case .ts: return "ts"
        }
    }
}
