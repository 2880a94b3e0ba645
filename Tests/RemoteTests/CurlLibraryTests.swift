import TestSupport
import XCTest

@testable import VMergeRemote

final class CurlLibraryTests: XCTestCase {
    func testTheLinkedLibcurlIsOneThatSignsS3Requests() throws {
        XCTAssertTrue(CurlLibrary.isReady)
        // CURLOPT_AWS_SIGV4 came with 7.75.
        let parts = CurlLibrary.version.split(separator: ".").compactMap { Int($0) }
        XCTAssertGreaterThanOrEqual(parts.count, 2, CurlLibrary.version)
        XCTAssertTrue(parts[0] > 7 || (parts[0] == 7 && parts[1] >= 75), CurlLibrary.version)
    }
}
