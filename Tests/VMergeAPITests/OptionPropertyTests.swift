import VMerge
import VMergeCore
import XCTest

/// The job options are declared once, as rows (`JobOption.all`), for both doors: the API's
/// properties are bound to those rows, so a row added for the command line and job files is
/// either given a `MergeJob` property or said to be left out, and a choice's public enum cannot
/// drift from the words the command line takes.
final class OptionPropertyTests: XCTestCase {
    func testEveryJobOptionIsAPropertyOrLeftOutWithAReason() {
        let rows = JobOption.all.map(\.name)
        let bound = MergeJob.optionProperties.map(\.option.name)
        let leftOut = MergeJob.optionsLeftOut.map(\.option)
        XCTAssertEqual(Set(bound).count, bound.count, "a row bound twice: \(bound)")
        XCTAssertEqual(Set(MergeJob.optionProperties.map(\.name)).count, bound.count, "a property bound twice")
        XCTAssertTrue(Set(bound).isDisjoint(with: leftOut), "bound and left out: \(Set(bound).intersection(leftOut))")
        for row in rows where !bound.contains(row) && !leftOut.contains(row) {
            XCTFail("'--\(row)' is neither a MergeJob property (optionProperties) nor in optionsLeftOut")
        }
        for name in bound + leftOut where !rows.contains(name) { XCTFail("'\(name)' is no row of JobOption.all") }
        for (option, reason) in MergeJob.optionsLeftOut where reason.isEmpty {
            XCTFail("'\(option)' left out without saying why")
        }
    }

    /// Each choice row has a public type whose cases are the row's words, in the row's order (the
    /// row's words are its core enum's cases), so neither side can gain or lose a case alone.
    func testEveryChoiceOptionHasAPublicTypeWithItsWords() {
        var choices = 0
        for row in JobOption.all {
            guard case .choice(let words) = row.kind else { continue }
            choices += 1
            if MergeJob.optionsLeftOut.contains(where: { $0.option == row.name }) { continue }
            let property = MergeJob.optionProperties.first { $0.option.name == row.name }
            XCTAssertEqual(property?.words, words, "'--\(row.name)' and its MergeJob property")
        }
        XCTAssertGreaterThan(choices, 0)
        // And the other way: only choices have words.
        for property in MergeJob.optionProperties where property.words != nil {
            guard case .choice = property.option.kind else { return XCTFail("\(property.name) has words") }
        }
    }

}
