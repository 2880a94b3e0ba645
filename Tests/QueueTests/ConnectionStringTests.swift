import XCTest

@testable import VMergeQueue

/// What messages show of a connection string: everything libpq read from it but its secrets.
final class ConnectionStringTests: XCTestCase {
    func testPasswordsAreLeftOut() {
        XCTAssertEqual(
            PGConnection.redacted("host=/tmp/pg dbname=vmerge user=me password=s3cret"),
            "host=/tmp/pg dbname=vmerge user=me")
        XCTAssertEqual(
            PGConnection.redacted("postgresql://me:s3cret@db.example:5433/jobs?sslmode=require&sslpassword=k3y"),
            "host=db.example port=5433 dbname=jobs user=me sslmode=require")
        XCTAssertEqual(PGConnection.redacted("password='a b\\' c' host=x"), "host=x")
    }

    func testValuesAreQuotedAsLibpqReadsThem() {
        XCTAssertEqual(
            PGConnection.redacted("host='/tmp/my folder' application_name='it\\'s'"),
            #"host='/tmp/my folder' application_name='it\'s'"#)
        XCTAssertEqual(PGConnection.redacted("dbname=''"), "dbname=''")
    }

    func testABareNameIsADatabase() {
        XCTAssertEqual(PGConnection.redacted("vmerge"), "dbname=vmerge")
    }

    /// libpq quotes the piece it could not read, which may be the password itself.
    func testAnUnreadableStringIsNotShown() {
        XCTAssertEqual(PGConnection.redacted("host=x password"), "connection string")
        XCTAssertEqual(PGConnection.redacted("postgresql://me:s3cret@[::1/db"), "connection string")
        XCTAssertEqual(
            PGConnection.scrubbed(
                "missing \"=\" after \"s3cret\" in connection info string", of: "host=x password s3cret"),
            "missing \"=\" after \"...\" in connection info string")
        // What the string names is no secret, its password is.
        XCTAssertEqual(
            PGConnection.scrubbed(
                "database \"jobs\" does not exist, s3cret", of: "dbname=jobs password=s3cret"),
            "database \"jobs\" does not exist, ...")
    }

    func testMessagesAreOneLine() {
        XCTAssertEqual(
            PGConnection.oneLine(
                "connection to server on socket \"/tmp/x/.s.PGSQL.5432\" failed: No such file or directory\n"
                    + "\tIs the server running locally and accepting connections on that socket?\n"),
            "connection to server on socket \"/tmp/x/.s.PGSQL.5432\" failed: No such file or directory; "
                + "Is the server running locally and accepting connections on that socket?")
        XCTAssertEqual(
            PGConnection.oneLine("ERROR:  relation \"jobs\" does not exist\nLINE 1: SELECT 1 FROM jobs\n"),
            "relation \"jobs\" does not exist; LINE 1: SELECT 1 FROM jobs")
        XCTAssertEqual(
            PGConnection.oneLine("connection to server failed: FATAL:  database \"x\" does not exist\n"),
            "connection to server failed: FATAL: database \"x\" does not exist")
    }
}
