import Foundation
import TestSupport
import XCTest

/// What the README says of the release binary and the Debian package, held against the ones the
/// build made: `make test-deb` runs this class with VMERGE_DEB (the package) and
/// VMERGE_RELEASE_BIN (the release binary before stripping) set; `make test` builds neither, so
/// there it is skipped.
final class PackageFactsTests: XCTestCase {
    private func artefact(_ variable: String) throws -> String {
        guard let path = ProcessInfo.processInfo.environment[variable], !path.isEmpty else {
            throw XCTSkip("\(variable) is not set: make test-deb runs this class on the package it builds")
        }
        XCTAssertTrue(FileManager.default.fileExists(atPath: path), path)
        return path
    }

    /// The number `pattern`'s first group finds in `text` (e.g. 82 in "about 82 MB unstripped").
    private func figure(_ pattern: String, in text: String) throws -> Double {
        let regex = try NSRegularExpression(pattern: pattern)
        let match = try XCTUnwrap(
            regex.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)), "no '\(pattern)' in the README")
        return try XCTUnwrap(Double(text[Range(match.range(at: 1), in: text)!]))
    }

    /// The sizes the README gives, in MB (10^6 bytes), within 1 MB of the build's.
    func testTheReadmesBinarySizesAreTheBuilds() throws {
        let binary = try artefact("VMERGE_RELEASE_BIN")
        let deb = try artefact("VMERGE_DEB")
        let install = try Documentation.section("Install") + Documentation.page("install.md")
        let mb = { (bytes: Int) in Double(bytes) / 1_000_000 }
        let unstripped = mb(try FileManager.default.attributesOfItem(atPath: binary)[.size] as? Int ?? 0)
        XCTAssertEqual(try figure(#"about (\d+) MB unstripped"#, in: install), unstripped, accuracy: 1)
        // The packed binary's size, from the package's file list ("-rwxr-xr-x root/root 62914560 ... ./usr/bin/vmerge").
        let list = try runTool("dpkg-deb", ["-c", deb])
        XCTAssertEqual(list.status, 0, list.stderr)
        let line = try XCTUnwrap(list.stdout.split(separator: "\n").first { $0.hasSuffix(" ./usr/bin/vmerge") })
        let stripped = mb(Int(line.split(separator: " ", omittingEmptySubsequences: true)[2]) ?? 0)
        XCTAssertEqual(try figure(#"stripped release binary\s+\((\d+) MB"#, in: install), stripped, accuracy: 1)
    }

    /// The README's `Depends` names exactly the packages the package depends on (their versions
    /// follow the build's libraries, so only the names are held).
    func testTheReadmesDependsIsThePackages() throws {
        let deb = try artefact("VMERGE_DEB")
        let field = try runTool("dpkg-deb", ["-f", deb, "Depends"])
        XCTAssertEqual(field.status, 0, field.stderr)
        let names = { (list: String) in
            Set(list.split(separator: ",").map { $0.split(separator: " ").first.map(String.init) ?? "" })
        }
        let install = try Documentation.section("Install") + Documentation.page("install.md").replacingOccurrences(of: "\n", with: " ")
        let regex = try NSRegularExpression(pattern: #"\(on Debian 12: (.*?)\), plus `adduser`"#)
        let match = try XCTUnwrap(regex.firstMatch(in: install, range: NSRange(install.startIndex..., in: install)))
        let said = String(install[Range(match.range(at: 1), in: install)!])
            .replacingOccurrences(of: "`", with: "").replacingOccurrences(of: " and ", with: ", ")
        XCTAssertEqual(
            names(said).union(["adduser"]), names(field.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
    }
}
