/// Arithmetic that cannot trap. Numbers from the command line, job files and media files reach
/// the timeline and the encoders; a hostile or damaged value must end in a refusal, never in
/// Swift's overflow trap. These pin a result to the type's range instead; callers that can
/// refuse a value check for the pinned ends, the rest only need not to crash.
extension FixedWidthInteger {
    /// `self + other`, pinned to `min...max` instead of overflowing.
    @inlinable package func addingSaturating(_ other: Self) -> Self {
        let (value, overflow) = addingReportingOverflow(other)
        return overflow ? (other > 0 ? .max : .min) : value
    }

    /// `self - other`, pinned to `min...max` instead of overflowing.
    @inlinable package func subtractingSaturating(_ other: Self) -> Self {
        let (value, overflow) = subtractingReportingOverflow(other)
        return overflow ? (other < 0 ? .max : .min) : value
    }

    /// `self * other`, pinned to `min...max` instead of overflowing.
    @inlinable package func multipliedSaturating(by other: Self) -> Self {
        let (value, overflow) = multipliedReportingOverflow(by: other)
        return overflow ? ((self < 0) != (other < 0) ? .min : .max) : value
    }

    /// `value` rounded toward zero as `Self(value)` does, but pinned to `min...max` where that
    /// traps (out of range, infinite); NaN gives 0.
    @inlinable package init(saturating value: Double) {
        if value.isNaN {
            self = 0
        } else if value >= Double(Self.max) {
            // Double(Int64.max) is 2^63, just past the range: every Double below it fits.
            self = .max
        } else if value <= Double(Self.min) {
            self = .min
        } else {
            self.init(value)
        }
    }
}

/// `a * b / c` rounded half away from zero (av_rescale's AV_ROUND_NEAR_INF), worked out in 128
/// bits so the product cannot overflow; a quotient beyond Int64 is pinned to Int64.min/max, and
/// so is a non-zero product over c == 0.
package func rescaled(_ a: Int64, by b: Int64, over c: Int64) -> Int64 {
    let negative = ((a < 0) != (b < 0)) != (c < 0)
    let product = a.magnitude.multipliedFullWidth(by: b.magnitude)
    if product.high == 0 && product.low == 0 { return 0 }
    guard c != 0 else { return negative ? .min : .max }
    let divisor = c.magnitude
    // Both factors are at most 2^63, so the product is at most 2^126: adding never carries out.
    let (low, carry) = product.low.addingReportingOverflow(divisor / 2)
    let high = product.high + (carry ? 1 : 0)
    guard high < divisor else { return negative ? .min : .max }  // the quotient needs > 64 bits
    let quotient = divisor.dividingFullWidth((high: high, low: low)).quotient
    if negative { return quotient >= Int64.min.magnitude ? .min : -Int64(quotient) }
    return quotient > UInt64(Int64.max) ? .max : Int64(quotient)
}
