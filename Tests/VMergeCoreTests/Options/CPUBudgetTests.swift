import Foundation
import XCTest

@testable import VMergeCore

/// The cores a process may use under a cgroup v2 CPU quota, read from a cgroup tree made here.
final class CPUBudgetTests: XCTestCase {
    func testQuotaText() {
        XCTAssertEqual(CPUBudget.quota("200000 100000\n"), 2)
        XCTAssertEqual(CPUBudget.quota("150000 100000"), 1.5)
        XCTAssertNil(CPUBudget.quota("max 100000\n"))
        XCTAssertNil(CPUBudget.quota(""))
        XCTAssertNil(CPUBudget.quota("-1 100000"))
        XCTAssertNil(CPUBudget.quota("100000 0"))
        XCTAssertEqual(CPUBudget.unifiedPath("12:cpu:/old\n0::/system.slice/vmerge.service\n"), "system.slice/vmerge.service")
        XCTAssertEqual(CPUBudget.unifiedPath("0::/\n"), "")
        XCTAssertNil(CPUBudget.unifiedPath("4:cpu,cpuacct:/docker/abc\n"))
    }

    /// The smallest quota from the process's cgroup up to the root; none where every level says
    /// "max"; a missing file is no limit.
    func testTheTightestQuotaOnThePathWins() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("cgroup-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let leaf = root.appendingPathComponent("kubepods/pod1/ctr")
        try FileManager.default.createDirectory(at: leaf, withIntermediateDirectories: true)
        try Data("max 100000\n".utf8).write(to: leaf.appendingPathComponent("cpu.max"))
        try Data("350000 100000\n".utf8).write(to: root.appendingPathComponent("kubepods/pod1/cpu.max"))
        try Data("800000 100000\n".utf8).write(to: root.appendingPathComponent("kubepods/cpu.max"))
        XCTAssertEqual(CPUBudget.cgroupQuota(root: root.path, membership: "0::/kubepods/pod1/ctr\n"), 3.5)
        XCTAssertEqual(CPUBudget.cgroupQuota(root: root.path, membership: "0::/kubepods\n"), 8)
        XCTAssertNil(CPUBudget.cgroupQuota(root: root.path, membership: "0::/\n"))
        XCTAssertNil(CPUBudget.cgroupQuota(root: root.path, membership: "0::/elsewhere/x\n"))
        XCTAssertGreaterThanOrEqual(CPUBudget.cores, 1)
        XCTAssertLessThanOrEqual(CPUBudget.cores, ProcessInfo.processInfo.activeProcessorCount)
    }
}
