/// One change of a digital input, as the kernel stamped it.
///
/// `line` indexes the board's inputs in a fixed order: the stations first (0..<stationCount),
/// then the clicker, error and ready buttons that the board has (see `InputMap`).
public struct SensorEdge: Sendable, Hashable, BitwiseCopyable {
    /// CLOCK_MONOTONIC nanoseconds, taken in the kernel's interrupt handler.
    public var timestamp: UInt64
    public var line: UInt32
    /// True when the line became active: a nose arrived, a button went down.
    public var isActive: Bool

    @inlinable
    public init(timestamp: UInt64, line: UInt32, isActive: Bool) {
        self.timestamp = timestamp
        self.line = line
        self.isActive = isActive
    }
}

/// What an input line is, in the trainer's words.
public enum InputRole: Sendable, Hashable, BitwiseCopyable, CustomStringConvertible {
    case station(Int)
    case clicker
    case errorButton
    case readyButton

    public var description: String {
        switch self {
        case .station(let index): return "station \(index + 1)"
        case .clicker: return "clicker button"
        case .errorButton: return "error button"
        case .readyButton: return "ready button"
        }
    }

    /// The role as a person reads it: a station by its board's name (`station North`), as
    /// everywhere else; `description` (its number) only where the board gave no name.
    public func described(stationNames: [String]) -> String {
        if case .station(let index) = self, index >= 0, index < stationNames.count {
            return "station \(stationNames[index])"
        }
        return description
    }
}
