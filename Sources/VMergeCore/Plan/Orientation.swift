/// How a clip's coded picture must be turned to stand upright: one of the eight rotations and
/// mirrorings a QuickTime/MP4 display matrix can express in steps of 90 degrees.
///
/// Each case names what the *display* does to the coded picture (what the player shows), which
/// is also the filter vmerge applies.
package enum Orientation: String, Sendable, CaseIterable, Codable {
    case identity
    case rotate90  // clockwise
    case rotate180
    case rotate270  // clockwise, i.e. 90 counter-clockwise
    case mirrorHorizontal  // left-right mirror (front cameras)
    case mirrorVertical
    case transpose  // swap axes: rotate 90 clockwise, then mirror left-right
    case antitranspose  // rotate 270 clockwise, then mirror left-right

    /// Classifies a display matrix as FFmpeg stores it (row-major a b u / c d v / x y w,
    /// 16.16 fixed point for a-d). A coded pixel (x, y), y pointing down, is shown at
    /// (a*x + c*y, b*x + d*y). Matrices that are not a multiple of 90 degrees are snapped to
    /// the nearest one; a degenerate matrix counts as none.
    package init(displayMatrix m: [Int32]) {
        guard m.count >= 5 else {
            self = .identity
            return
        }
        let a = Double(m[0]), b = Double(m[1]), c = Double(m[3]), d = Double(m[4])
        let det = a * d - b * c
        guard det != 0, a.isFinite else {
            self = .identity
            return
        }
        // Where the coded x axis points on screen, snapped to an axis.
        let xAxis: (Int, Int) = abs(a) >= abs(b) ? (a > 0 ? 1 : -1, 0) : (0, b > 0 ? 1 : -1)
        let mirrored = det < 0
        switch (xAxis, mirrored) {
        case ((1, 0), false): self = .identity
        case ((0, 1), false): self = .rotate90
        case ((-1, 0), false): self = .rotate180
        case ((0, -1), false): self = .rotate270
        case ((-1, 0), true): self = .mirrorHorizontal
        case ((1, 0), true): self = .mirrorVertical
        case ((0, 1), true): self = .transpose
        default: self = .antitranspose
        }
    }

    /// True when width and height trade places.
    package var swapsAxes: Bool {
        switch self {
        case .rotate90, .rotate270, .transpose, .antitranspose: return true
        default: return false
        }
    }

    /// Clockwise rotation in degrees; with `isMirrored`, the transform is this rotation followed
    /// by a left-right mirror.
    package var rotationDegrees: Int {
        switch self {
        case .identity, .mirrorHorizontal: return 0
        case .rotate90, .transpose: return 90
        case .rotate180, .mirrorVertical: return 180
        case .rotate270, .antitranspose: return 270
        }
    }

    /// True when the clip was stored mirrored (the transform includes a reflection).
    package var isMirrored: Bool {
        switch self {
        case .mirrorHorizontal, .mirrorVertical, .transpose, .antitranspose: return true
        default: return false
        }
    }

    /// libavfilter filters that turn the coded picture upright.
    package var filters: [String] {
        switch self {
        case .identity: return []
        case .rotate90: return ["transpose=clock"]
        case .rotate180: return ["hflip", "vflip"]
        case .rotate270: return ["transpose=cclock"]
        case .mirrorHorizontal: return ["hflip"]
        case .mirrorVertical: return ["vflip"]
        case .transpose: return ["transpose=cclock_flip"]
        case .antitranspose: return ["transpose=clock_flip"]
        }
    }
}
