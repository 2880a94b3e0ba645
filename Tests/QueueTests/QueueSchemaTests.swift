import Foundation
import VMergeCore
import XCTest

@testable import VMergeQueue

final class QueueSchemaTests: ServerTestCase {
    func testInitTwiceChangesNothing() throws {
        let connection = try PGConnection(database)
        XCTAssertEqual(try QueueSchema.migrate(connection), .init(from: 0, to: QueueSchema.version))
        XCTAssertEqual(try QueueSchema.migrate(connection), .init(from: QueueSchema.version, to: QueueSchema.version))
        try QueueSchema.check(connection)
        let versions = try connection.execute("SELECT version FROM vmerge.schema_version ORDER BY version")
        XCTAssertEqual((0..<versions.rowCount).map { versions.value($0, 0) }, ["1"])
    }

    /// The advisory lock makes the second wait for the first, then find the schema made.
    func testConcurrentInitsTakeTurns() throws {
        let target = database!
        let results = Locked<[Result<QueueSchema.Migration, Error>]>([])
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            let result = Result { try QueueSchema.migrate(PGConnection(target)) }
            results.update { $0.append(result) }
        }
        let migrations = try results.value.map { try $0.get() }
        XCTAssertEqual(migrations.filter { $0.from == 0 }.count, 1, "\(migrations)")
        XCTAssertEqual(Set(migrations.map(\.to)), [QueueSchema.version])
    }

    func testADatabaseWithoutTheQueueIsRefused() throws {
        let connection = try PGConnection(database)
        XCTAssertThrowsError(try QueueSchema.check(connection)) { error in
            XCTAssertEqual(
                "\(error)", "\(connection.target): no job queue in this database: create it with 'vmerge queue init'")
        }
    }

    /// A newer vmerge migrated the queue: this one neither uses nor "migrates" it.
    func testANewerSchemaIsRefused() throws {
        let connection = try PGConnection(database)
        try QueueSchema.migrate(connection)
        try connection.execute("INSERT INTO vmerge.schema_version (version) VALUES (99)")
        let expected =
            "\(connection.target): the job queue is at schema version 99, newer than this vmerge knows "
            + "(\(QueueSchema.version)): use a newer vmerge"
        XCTAssertThrowsError(try QueueSchema.check(connection)) { XCTAssertEqual("\($0)", expected) }
        XCTAssertThrowsError(try QueueSchema.migrate(connection)) { XCTAssertEqual("\($0)", expected) }
    }

    func testTheStatesAreChecked() throws {
        let connection = try PGConnection(database)
        try QueueSchema.migrate(connection)
        XCTAssertThrowsError(
            try connection.execute(
                "INSERT INTO vmerge.jobs (job_key, name, spec, state) VALUES ('k', 'n', '{}', $1)", ["paused"])
        ) { error in
            XCTAssertTrue("\(error)".contains("violates check constraint"), "\(error)")
        }
    }
}

/// What a worker sees of the server going away under an open connection.
final class ConnectionLossTests: ServerTestCase {
    func testARestartedServerBreaksTheConnection() throws {
        let connection = try PGConnection(database)
        XCTAssertFalse(connection.isBroken)
        try server.restart()
        XCTAssertThrowsError(try connection.execute("SELECT 1")) { error in
            guard case let .database(target, message)? = error as? VMergeError else { return XCTFail("\(error)") }
            XCTAssertEqual(target, PGConnection.redacted(database))
            XCTAssertFalse(message.contains("\n"), message)
        }
        XCTAssertTrue(connection.isBroken)
        XCTAssertEqual(try PGConnection(database).execute("SELECT 1").value(0, 0), "1")
    }
}

/// A value shared between threads.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value

    init(_ value: Value) { stored = value }

    var value: Value { lock.withLock { stored } }

    func update(_ change: (inout Value) -> Void) { lock.withLock { change(&stored) } }
}
