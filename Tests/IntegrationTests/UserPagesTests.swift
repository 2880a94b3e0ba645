import Foundation
import TestSupport
import XCTest

/// The README stays a newcomer's page, and every link between the user's pages lands: a page that
/// exists, at a heading it has (as GitHub makes anchors of headings).
final class UserPagesTests: XCTestCase {
    /// What the README keeps: what vmerge is, the two set-up commands, a first merge, the install
    /// table and where to go next; the rest lives under docs/.
    func testTheReadmeIsShortAndPointsToEveryPage() throws {
        let readme = try Documentation.page("README.md")
        let lines = readme.components(separatedBy: "\n").count
        XCTAssertLessThan(lines, 300, "README.md has \(lines) lines")
        for heading in ["Set-up", "A first merge", "Install", "Where to go next"] {
            XCTAssertNoThrow(try Documentation.section(heading), heading)
        }
        let pages = Documentation.pages.dropFirst().map(\.lastPathComponent).filter { $0 != "README.md" }
        XCTAssertFalse(pages.isEmpty)
        for page in pages {
            XCTAssertTrue(readme.contains("](docs/\(page))"), "the README does not point to docs/\(page)")
        }
    }

    func testEveryLinkLands() throws {
        var broken: [String] = []
        for page in Documentation.pages {
            let text = try String(contentsOf: page, encoding: .utf8)
            for link in Self.links(in: text) where !link.contains("://") && !link.hasPrefix("mailto:") {
                let parts = link.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
                let target =
                    parts[0].isEmpty ? page : page.deletingLastPathComponent().appendingPathComponent(parts[0])
                guard FileManager.default.fileExists(atPath: target.path) else {
                    broken.append("\(page.lastPathComponent): \(link): no such file")
                    continue
                }
                if parts.count == 2, target.pathExtension == "md" {
                    let anchors = Self.anchors(try String(contentsOf: target, encoding: .utf8))
                    if !anchors.contains(parts[1]) {
                        broken.append("\(page.lastPathComponent): \(link): no such heading")
                    }
                }
            }
        }
        XCTAssertEqual(broken, [])
    }

    /// A page's contents list names each of its `##` and `###` headings, in order.
    func testEveryContentsListIsWhole() throws {
        for page in Documentation.pages {
            let text = try String(contentsOf: page, encoding: .utf8)
            guard let list = text.components(separatedBy: "\nContents:\n\n").dropFirst().first else { continue }
            let listed = list.components(separatedBy: "\n\n")[0].components(separatedBy: "\n")
                .compactMap { $0.firstMatch(of: /\(#([^)]+)\)/).map { String($0.output.1) } }
            var fenced = false
            var headings: [String] = []
            for line in text.components(separatedBy: "\n") {
                if line.hasPrefix("```") { fenced.toggle() }
                if !fenced, line.hasPrefix("## ") || line.hasPrefix("### ") {
                    headings.append(contentsOf: Self.anchors(line))
                }
            }
            XCTAssertEqual(listed, headings, "the contents of \(page.lastPathComponent)")
        }
    }

    /// The targets of `[text](target)` links outside code blocks and code spans.
    static func links(in text: String) -> [String] {
        var fenced = false
        var found: [String] = []
        for line in text.components(separatedBy: "\n") {
            if line.hasPrefix("```") { fenced.toggle() }
            if fenced { continue }
            let prose = line.split(separator: "`", omittingEmptySubsequences: false).enumerated()
                .filter { $0.offset % 2 == 0 }.map(\.element).joined(separator: " ")
            found += prose.matches(of: /\]\(([^)\s]+)\)/).map { String($0.output.1) }
        }
        return found
    }

    /// GitHub's anchors: a heading lowercased, its punctuation dropped, spaces as hyphens.
    static func anchors(_ text: String) -> Set<String> {
        var fenced = false
        var found = Set<String>()
        for line in text.components(separatedBy: "\n") {
            if line.hasPrefix("```") { fenced.toggle() }
            guard !fenced, line.hasPrefix("#") else { continue }
            let title = line.drop { $0 == "#" }.trimmingCharacters(in: .whitespaces).lowercased()
            found.insert(
                String(
                    title.unicodeScalars.compactMap { scalar -> Character? in
                        if scalar == " " { return "-" }
                        if scalar == "-" || scalar == "_" || CharacterSet.alphanumerics.contains(scalar) {
                            return Character(scalar)
                        }
                        return nil
                    }))
        }
        return found
    }
}
