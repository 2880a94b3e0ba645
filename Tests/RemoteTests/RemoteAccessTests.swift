import Foundation
import TestSupport
import VMergeCore
import XCTest

@testable import VMergeRemote

/// Which names a job from outside may use, and which addresses an https name may reach.
final class RemoteAccessTests: XCTestCase {
    func name(_ text: String) -> RemoteName { RemoteName(text)! }

    func testAPrefixHoldsItsOwnBucketsKeysAndItsOwnOriginsPathsOnly() throws {
        let access = RemoteAccess(
            listed: [name("s3://media/trips/"), name("https://cdn.example.com/clips/")], listingRequired: true)
        XCTAssertTrue(access.isListed(name("s3://media/trips/a.mov")))
        XCTAssertFalse(access.isListed(name("s3://media/tripsx/a.mov")))
        XCTAssertFalse(access.isListed(name("s3://other/trips/a.mov")))
        XCTAssertTrue(access.isListed(name("https://CDN.example.com/clips/a.mov?sig=1")))
        XCTAssertTrue(access.isListed(name("https://cdn.example.com:443/clips/a.mov")))
        XCTAssertFalse(access.isListed(name("https://cdn.example.com:8443/clips/a.mov")))
        XCTAssertFalse(access.isListed(name("https://cdn.example.com/clipsx/a.mov")))
        XCTAssertFalse(access.isListed(name("https://cdn.example.com.evil.net/clips/a.mov")))
        XCTAssertNotNil(access.problem(with: name("s3://other/trips/a.mov")))
        // Without its slash a prefix still ends at one: tenant1 never holds tenant10.
        let bare = RemoteAccess(listed: [name("s3://media/tenant1")], listingRequired: true)
        XCTAssertTrue(bare.isListed(name("s3://media/tenant1/a.mov")))
        XCTAssertFalse(bare.isListed(name("s3://media/tenant10/a.mov")))
        XCTAssertNil(RemoteAccess.commandLine.problem(with: name("s3://other/trips/a.mov")))
    }

    func testNamesThatCouldLeaveAPrefixOrHideAHostAreNoNames() {
        for text in [
            "s3://media/trips/../secret.mov", "s3://media/./a.mov", "https://h/a/%2e%2e/b.mov",
            "https://h/a/%2E./b.mov",
            "https://h/a/../b.mov", "https://user:pass@h/a.mov", "https://good.com@evil.com/a.mov",
            "s3://Bad_Bucket/a.mov",
            "https:///a.mov", "https://h/a.mov#frag", "s3://media/a\u{1B}[2J.mov", "s3://media/a\nb.mov",
        ] {
            XCTAssertNil(RemoteName(text), text)
        }
        XCTAssertEqual(RemoteName("https://h/a.mov?X-Amz-Signature=s")?.description, "https://h/a.mov?…")
        // A word that does not parse shows its scheme only: no user, password or query of it.
        XCTAssertEqual(RemoteName.shown("https://u:PASS@127.0.0.1:5443:1/x.mov?sig=S"), "https://…")
    }

    func testOnlyPublicAddressesAreReachedUnlisted() {
        func v4(_ text: String) -> Bool {
            var address = in_addr()
            XCTAssertEqual(inet_pton(AF_INET, text, &address), 1, text)
            return withUnsafeBytes(of: &address) {
                AddressRule.isPublic(family: AF_INET, bytes: $0.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
        func v6(_ text: String) -> Bool {
            var address = in6_addr()
            XCTAssertEqual(inet_pton(AF_INET6, text, &address), 1, text)
            return withUnsafeBytes(of: &address) {
                AddressRule.isPublic(family: AF_INET6, bytes: $0.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
        for refused in [
            "127.0.0.1", "127.8.9.10", "10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1", "169.254.169.254",
            "100.64.0.1", "0.0.0.0", "224.0.0.1", "255.255.255.255",
        ] {
            XCTAssertFalse(v4(refused), refused)
        }
        for allowed in ["8.8.8.8", "172.32.0.1", "100.128.0.1", "193.0.0.1"] { XCTAssertTrue(v4(allowed), allowed) }
        for refused in [
            "::1", "::", "::127.0.0.1", "::a9fe:a9fe", "fd00::1", "fe80::1", "ff02::1", "::ffff:127.0.0.1",
            "::ffff:169.254.169.254", "64:ff9b::a9fe:a9fe",
        ] {
            XCTAssertFalse(v6(refused), refused)
        }
        for allowed in ["2001:4860:4860::8888", "::ffff:8.8.8.8"] { XCTAssertTrue(v6(allowed), allowed) }
    }
}
