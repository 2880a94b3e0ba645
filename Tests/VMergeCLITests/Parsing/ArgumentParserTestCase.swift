import XCTest

@testable import VMergeCLI

/// The command line as ArgumentParser reads it, in process. The classes are named by what they
/// parse (ArgumentParserTests, MergeOptionParsingTests, SubcommandParsingTests,
/// ForeignOptionHintTests); this is what they share: a command line parsed into a merge, or into
/// the usage error it must be.
class ArgumentParserTestCase: XCTestCase {
    func request(_ args: [String], file: StaticString = #filePath, line: UInt = #line) -> MergeCommand? {
        do {
            let command = try ArgumentParser.parse(args)
            guard case let .run(request as MergeCommand) = command else {
                XCTFail("expected a merge, got \(command)", file: file, line: line)
                return nil
            }
            return request
        } catch {
            XCTFail("unexpected error \(error) for \(args)", file: file, line: line)
            return nil
        }
    }

    func usageError(_ args: [String], file: StaticString = #filePath, line: UInt = #line) -> String? {
        do {
            let command = try ArgumentParser.parse(args)
            XCTFail("expected a usage error for \(args), got \(command)", file: file, line: line)
            return nil
        } catch let error as UsageError {
            return error.description
        } catch {
            XCTFail("expected UsageError, got \(error)", file: file, line: line)
            return nil
        }
    }
}
