import Foundation
import TestSupport
import XCTest

/// Every document of the README's `yaml` blocks, parsed by PyYAML (a syntax error fails here).
func readmeManifests() throws -> [[String: Any]] {
    let script = """
        import json, re, sys, yaml
        text = "\\n".join(open(p, encoding="utf-8").read() for p in sys.argv[1:])
        blocks = re.findall(r"^```yaml\\n(.*?)^```$", text, re.S | re.M)
        print(json.dumps([d for b in blocks for d in yaml.safe_load_all(b) if d is not None]))
        """
    let parsed = try runTool("python3", ["-c", script] + Documentation.pages.map(\.path))
    let problem = parsed.stderr
    if problem.contains("No module named 'yaml'") || parsed.status == 127 {
        let environment = ProcessInfo.processInfo.environment
        if environment["CI"]?.isEmpty == false || environment["VMERGE_REQUIRE_TOOLS"] == "1" {
            throw HTTPTestError("python3 with PyYAML (python3-yaml) is not installed, and CI needs it")
        }
        throw XCTSkip("python3 with PyYAML (Debian's python3-yaml) is needed to parse the README's manifests")
    }
    XCTAssertEqual(parsed.status, 0, problem)
    return try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(parsed.stdout.utf8)) as? [[String: Any]])
}

/// `object` followed down `path` (keys of mappings, indexes of lists).
func follow(_ object: Any?, _ path: [Any]) -> Any? {
    path.reduce(object) { value, step in
        if let key = step as? String { return (value as? [String: Any])?[key] }
        guard let index = step as? Int, let list = value as? [Any], list.indices.contains(index) else { return nil }
        return list[index]
    }
}
