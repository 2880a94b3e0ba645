import Foundation

/// The user's documentation as the tests hold it true: README.md and the pages under docs/.
/// Tests find a section by its heading wherever it lives, so moving a section between pages
/// moves no test.
public enum Documentation {
    /// README.md first, then docs/*.md by name.
    public static var pages: [URL] {
        let docs = Fixtures.root.appendingPathComponent("docs")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: docs.path)) ?? []
        return [Fixtures.root.appendingPathComponent("README.md")]
            + names.filter { $0.hasSuffix(".md") }.sorted().map { docs.appendingPathComponent($0) }
    }

    public struct Missing: Error, CustomStringConvertible {
        public var heading: String
        public var description: String { "no section headed \"\(heading)\" in README.md or docs/*.md" }
    }

    /// The text of one page (README.md, or a name under docs/).
    public static func page(_ name: String) throws -> String {
        let url =
            name == "README.md"
            ? Fixtures.root.appendingPathComponent(name) : Fixtures.root.appendingPathComponent("docs/\(name)")
        return try String(contentsOf: url, encoding: .utf8)
    }

    /// Every page's text, one after another.
    public static func allText() throws -> String {
        try pages.map { try String(contentsOf: $0, encoding: .utf8) }.joined(separator: "\n")
    }

    /// The section under the heading whose text is `heading` (at any level, `#` to `####`), up to
    /// the next heading of the same level or above, in whichever page has it.
    public static func section(_ heading: String) throws -> String {
        for url in pages {
            let lines = try String(contentsOf: url, encoding: .utf8).components(separatedBy: "\n")
            var fenced = false
            var level = 0
            var taken: [String] = []
            for line in lines {
                if line.hasPrefix("```") { fenced.toggle() }
                let depth = fenced || line.hasPrefix("```") ? 0 : headingLevel(line)
                if level > 0 {
                    if depth > 0 && depth <= level { return taken.joined(separator: "\n") }
                    taken.append(line)
                } else if depth > 0 && line.dropFirst(depth + 1) == heading[...] {
                    level = depth
                }
            }
            if level > 0 { return taken.joined(separator: "\n") }
        }
        throw Missing(heading: heading)
    }

    private static func headingLevel(_ line: String) -> Int {
        let hashes = line.prefix { $0 == "#" }.count
        return (1...4).contains(hashes) && line.dropFirst(hashes).first == " " ? hashes : 0
    }
}
