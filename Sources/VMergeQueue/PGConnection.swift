import CLibPQ
import Foundation
import VMergeCore

/// Owns a PGconn: one connection to the queue's database, closed (PQfinish) in deinit.
///
/// Every statement goes through `execute` with its values as parameters (PQexecParams, text
/// format): no value is ever spliced into SQL. Errors are `VMergeError.database`, naming the
/// connection string with its password removed and giving libpq's reason on one line.
package final class PGConnection {
    let pointer: OpaquePointer
    /// The connection string as messages show it: no password.
    package let target: String

    /// Connects with libpq's own rules: `conninfo` is a URI (postgresql://...), key=value pairs, or
    /// a bare database name; what it leaves out comes from the PG* variables, and a password from
    /// ~/.pgpass. A server that does not answer is given up after `connectTimeout` seconds (libpq
    /// counts it per address tried; 2 at least), unless the string sets its own.
    package init(_ conninfo: String, connectTimeout: Int = 10) throws {
        target = PGConnection.redacted(conninfo)
        // expand_dbname: the "dbname" entry is read as the whole connection string, and overrides
        // the defaults before it: a server that does not answer is given up, not waited for forever,
        // and over TCP a peer gone silent (a cut network, a machine gone) is given up after about
        // 30 s instead of the system's hours, so a worker's call returns and it reconnects.
        // NULL ends both lists.
        let keywords = [
            "fallback_application_name", "connect_timeout", "keepalives_idle", "keepalives_interval",
            "keepalives_count", "tcp_user_timeout", "dbname", nil,
        ]
        let values = ["vmerge", "\(max(2, connectTimeout))", "10", "5", "3", "30000", conninfo, nil]
        let connection = withCStrings(keywords) { keywords in
            withCStrings(values) { values in PQconnectdbParams(keywords, values, 1) }
        }
        guard let connection else { throw VMergeError.database(target: target, message: "out of memory") }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = PGConnection.scrubbed(
                PGConnection.oneLine(String(cString: PQerrorMessage(connection))), of: conninfo)
            PQfinish(connection)
            throw VMergeError.database(target: target, message: message)
        }
        pointer = connection
        // The server's notices ("relation already exists, skipping") are not vmerge's to print.
        PQsetNoticeProcessor(pointer, { _, _ in }, nil)
    }

    deinit { PQfinish(pointer) }

    /// The connection was lost (the server stopped or restarted); a new one is needed.
    package var isBroken: Bool { PQstatus(pointer) == CONNECTION_BAD }

    /// The connection's socket, for `interrupt(socket:)` from another thread.
    package var socket: Int32 { PQsocket(pointer) }

    /// Ends a statement that waits on a server that stopped answering but whose machine still
    /// keeps the connection up (a server process stopped, not crashed: neither TCP keepalives
    /// nor libpq's timeouts end that wait). Shutting the socket down makes the waiting read
    /// return, and the statement fail as a lost connection. The caller must make sure the
    /// connection is not closed meanwhile (its socket number could then be another file's).
    package static func interrupt(socket: Int32) { _ = shutdown(socket, Int32(SHUT_RDWR)) }

    /// Runs one statement with `parameters` as $1, $2... (nil is NULL); returns its rows.
    @discardableResult
    package func execute(_ sql: String, _ parameters: [String?] = []) throws -> PGResult {
        let result = withCStrings(parameters) { values in
            PQexecParams(pointer, sql, Int32(parameters.count), nil, values, nil, nil, 0)
        }
        guard let result else { throw failure(PQerrorMessage(pointer)) }
        let owned = PGResult(result)
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK: return owned
        default:
            let state = PQresultErrorField(result, vm_pg_diag_sqlstate()).map { String(cString: $0) }
            throw failure(PQresultErrorMessage(result), state: state)
        }
    }

    /// Runs `body` in one transaction: committed if it returns, rolled back if it throws.
    package func transaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN")
        let value: T
        do {
            value = try body()
        } catch {
            _ = try? execute("ROLLBACK")
            throw error
        }
        try execute("COMMIT")
        return value
    }

    private func failure(_ message: UnsafePointer<CChar>?, state: String? = nil) -> VMergeError {
        lastSQLState = state
        let text = message.map { String(cString: $0) } ?? ""
        return .database(target: target, message: PGConnection.oneLine(text.isEmpty ? "the query failed" : text))
    }

    /// The SQLSTATE of the last statement that failed with one (nil: no answer from the server).
    package private(set) var lastSQLState: String?

    /// Whether a statement that failed with `state` would fail the same way again, whatever the
    /// wait: a privilege, a missing or changed table (class 42, 3F), a constraint (23), a value
    /// out of range (22). Lost connections (08), a server shutting down or starting (57), out of
    /// resources (53, 58) and rolled-back transactions (40) pass.
    package static func isPermanent(_ state: String) -> Bool {
        ["42", "3F", "23", "22"].contains(String(state.prefix(2)))
    }

    /// `conninfo` as libpq reads it, rebuilt as key=value pairs without the values libpq marks
    /// secret (password, sslpassword): what a message or a report may show. A string libpq
    /// cannot read is not shown at all (it might hold a password anywhere).
    package static func redacted(_ conninfo: String) -> String {
        guard let options = parsed(conninfo) else { return "connection string" }
        // Where first, then who; the rest in libpq's order.
        let first = ["host", "hostaddr", "port", "dbname", "user"]
        let shown = options.filter { !$0.secret }.enumerated().sorted { a, b in
            let rank = { (keyword: String) in first.firstIndex(of: keyword) ?? first.count }
            return (rank(a.element.keyword), a.offset) < (rank(b.element.keyword), b.offset)
        }
        if shown.isEmpty { return "connection string" }
        return shown.map { $0.element.keyword + "=" + quoted($0.element.value) }.joined(separator: " ")
    }

    /// Whether `conninfo` carries a secret (a password): on a command line, every local user can
    /// read it in `ps`. In a string libpq cannot read, a "password" key or a URI's user:password@.
    package static func carriesSecret(_ conninfo: String) -> Bool {
        guard let options = parsed(conninfo) else {
            return conninfo.lowercased().contains("password")
                || conninfo.range(of: #"^postgres(ql)?://[^/@]*:[^/@]*@"#, options: .regularExpression) != nil
        }
        return options.contains { $0.secret && !$0.value.isEmpty }
    }

    /// The options `conninfo` sets, as PQconninfoParse reads them; nil if it cannot.
    private static func parsed(_ conninfo: String) -> [(keyword: String, value: String, secret: Bool)]? {
        // A bare name is a database name (PQconnectdbParams reads it so); PQconninfoParse does not.
        let isBareName =
            !conninfo.contains("=") && !conninfo.hasPrefix("postgresql://") && !conninfo.hasPrefix("postgres://")
        if isBareName && !conninfo.isEmpty { return [("dbname", conninfo, false)] }
        var error: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(conninfo, &error) else {
            PQfreemem(error)
            return nil
        }
        defer { PQconninfoFree(options) }
        var found: [(keyword: String, value: String, secret: Bool)] = []
        var option = options
        while let keyword = option.pointee.keyword {
            defer { option += 1 }
            guard let value = option.pointee.val else { continue }
            let secret = option.pointee.dispchar.map { String(cString: $0) == "*" } ?? false
            found.append((String(cString: keyword), String(cString: value), secret))
        }
        return found
    }

    /// A value as a connection string needs it: quoted when empty or holding spaces, quotes or
    /// backslashes.
    private static func quoted(_ value: String) -> String {
        guard value.isEmpty || value.contains(where: { $0.isWhitespace || $0 == "'" || $0 == "\\" }) else {
            return value
        }
        return "'" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
    }

    /// libpq's multi-line message ("FATAL:  ...", tab-indented hints) as one line, spaces folded.
    static func oneLine(_ message: String) -> String {
        message.split(whereSeparator: \.isNewline).map { line -> String in
            var line = line.split(whereSeparator: \.isWhitespace).joined(separator: " ")
            for prefix in ["ERROR: ", "FATAL: "] where line.hasPrefix(prefix) { line.removeFirst(prefix.count) }
            return line
        }.filter { !$0.isEmpty }.joined(separator: "; ")
    }

    /// `message` without the secrets of `conninfo`. libpq quotes the part of a connection string
    /// it could not read, which may be or hold the password: when it cannot read the string, every
    /// quoted part taken from it is left out.
    static func scrubbed(_ message: String, of conninfo: String) -> String {
        guard let options = parsed(conninfo) else {
            // Odd pieces are inside quotes.
            return message.split(separator: "\"", omittingEmptySubsequences: false).enumerated().map { index, part in
                index % 2 == 1 && part.count > 1 && conninfo.contains(part) ? "..." : String(part)
            }.joined(separator: "\"")
        }
        return options.filter { $0.secret && !$0.value.isEmpty }.reduce(message) { text, option in
            text.replacingOccurrences(of: option.value, with: "...")
        }
    }
}

/// Owns a PGresult: the rows of one statement, cleared (PQclear) in deinit.
package final class PGResult {
    let pointer: OpaquePointer

    init(_ pointer: OpaquePointer) { self.pointer = pointer }

    deinit { PQclear(pointer) }

    package var rowCount: Int { Int(PQntuples(pointer)) }

    /// The text of a field; nil for NULL.
    package func value(_ row: Int, _ column: Int) -> String? {
        if PQgetisnull(pointer, Int32(row), Int32(column)) != 0 { return nil }
        return String(cString: PQgetvalue(pointer, Int32(row), Int32(column)))
    }

    /// Number of rows an UPDATE, INSERT or DELETE touched.
    package var affectedRows: Int { Int(String(cString: PQcmdTuples(pointer))) ?? 0 }
}

/// `strings` as a C array of C strings (nil entries stay NULL), alive for `body`.
private func withCStrings<T>(_ strings: [String?], _ body: (UnsafePointer<UnsafePointer<CChar>?>?) -> T) -> T {
    let copies = strings.map { $0.flatMap { strdup($0) } }
    defer { copies.forEach { free($0) } }
    return copies.map { $0.map { UnsafePointer($0) } }.withUnsafeBufferPointer { body($0.baseAddress) }
}
