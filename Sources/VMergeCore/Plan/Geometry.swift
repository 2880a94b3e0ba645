/// A rectangle in a clip's coded picture, in pixels.
package struct CropRect: Hashable, Sendable {
    package var x: Int, y: Int, width: Int, height: Int
    package init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }
}

/// Output picture size: `width` wide, height from the aspect, both even (4:2:0 chroma).
package func outputSize(width: Int, aspect: Rational) -> (width: Int, height: Int) {
    let height = Double(width) * Double(aspect.den) / Double(aspect.num)
    // Saturating: an absurd aspect gives an absurd height (which the encoder refuses), not a trap.
    return (width, max(2, min(Int(saturating: (height / 2).rounded()), Int.max / 2) * 2))
}

/// How a clip whose shape differs from the output's fills it.
package enum Fit: String, Sendable, CaseIterable, Codable {
    /// Fill the picture: the centred region of the output's aspect, the rest cut off.
    case crop
    /// The whole picture, scaled to fit, with black bars.
    case pad
    /// The whole picture over a blurred, darkened copy of itself scaled to fill (as phone apps
    /// show a portrait clip in a landscape frame).
    case blur
}

/// The size, in coded orientation (before the picture is turned upright), of the whole coded
/// picture scaled to fit inside `box` (also in coded orientation), square pixels, both even.
package func fittedSize(
    codedWidth: Int, codedHeight: Int, sampleAspect: Rational, box: (width: Int, height: Int)
) -> (width: Int, height: Int) {
    let sar = sampleAspect.isPositive ? sampleAspect.doubleValue : 1
    let displayW = Double(max(1, codedWidth)) * sar, displayH = Double(max(1, codedHeight))
    let scale = min(Double(box.width) / displayW, Double(box.height) / displayH)
    func even(_ v: Double, limit: Int) -> Int {
        min(max(2, min(Int(saturating: (v / 2).rounded()), Int.max / 2) * 2), limit & ~1)
    }
    return (even(displayW * scale, limit: box.width), even(displayH * scale, limit: box.height))
}

/// The centred region of the coded picture that, once turned upright by `orientation`, has the
/// output aspect. Worked out on the coded picture so cropping and scaling happen before the
/// (then cheap) transpose; the region is centred, so mirrors do not move it.
///
/// `sampleAspect` is the coded pixel's width/height (1:1 for nearly every phone clip).
package func centreCrop(
    codedWidth: Int, codedHeight: Int, sampleAspect: Rational,
    orientation: Orientation, aspect: Rational
) -> CropRect {
    let sar = sampleAspect.isPositive ? sampleAspect.doubleValue : 1
    // Display-space size of the coded picture, then of the upright one.
    let displayW = Double(codedWidth) * sar, displayH = Double(codedHeight)
    let (uprightW, uprightH) = orientation.swapsAxes ? (displayH, displayW) : (displayW, displayH)
    let target = aspect.doubleValue
    var cropW = uprightW, cropH = uprightH
    if uprightW / uprightH > target { cropW = uprightH * target } else { cropH = uprightW / target }
    let (codedCropW, codedCropH) = orientation.swapsAxes ? (cropH / sar, cropW) : (cropW / sar, cropH)
    func even(_ v: Double, limit: Int) -> Int {
        min(max(2, min(Int(saturating: (v / 2).rounded()), Int.max / 2) * 2), limit & ~1)
    }
    let w = even(codedCropW, limit: codedWidth), h = even(codedCropH, limit: codedHeight)
    // Exactly centred, odd offsets included: the crop filter's exact mode takes them, and
    // rounding down to even let one column (or row) of what lies outside into the picture.
    return CropRect(x: (codedWidth - w) / 2, y: (codedHeight - h) / 2, width: w, height: h)
}
