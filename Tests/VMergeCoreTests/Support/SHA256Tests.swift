import XCTest

@testable import VMergeCore

/// The digests job keys are made of, against published vectors (FIPS 180-4's examples, NIST's
/// million a's) and Python's hashlib: whatever computes them, they must not move (JobKeyGoldenTests
/// says why).
final class SHA256Tests: XCTestCase {
    func testSHA256KnownVectors() {
        XCTAssertEqual(SHA256.hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        XCTAssertEqual(SHA256.hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        XCTAssertEqual(
            SHA256.hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        // Crosses a block boundary with the length in the next block.
        XCTAssertEqual(
            SHA256.hex(String(repeating: "a", count: 1000)),
            "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3")
    }

    func testAMegabyteDigestsAsNISTSays() {
        XCTAssertEqual(
            SHA256.hex(String(repeating: "a", count: 1_000_000)),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    /// A name's bytes are hashed as UTF-8 (two, three and four bytes a character here), not as
    /// UTF-16 or escaped text.
    func testNonASCIITextDigestsItsUTF8Bytes() {
        let text = "Grüße aus Köln, 東京へ 🎬 — naïve café"
        XCTAssertEqual(text.utf8.count, 50)
        XCTAssertEqual(SHA256.hex(text), "d283abb3409edbb79c665518414a0468bd4219eea2ea8731f74deb1473a30f92")
    }

    func testEveryByteValueDigests() {
        let digest = SHA256.digest((0...255).map { UInt8($0) })
        XCTAssertEqual(digest.count, 32)
        XCTAssertEqual(
            digest.map { String($0, radix: 16) }.map { $0.count == 1 ? "0" + $0 : $0 }.joined(),
            "40aff2e9d2d8922e47afd4648e6967497158785fbd1da870e7110266bf944880")
    }
}
