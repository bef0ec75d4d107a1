/// A piezo buzzer on a GPIO output: a click with no audio stack at all.
public protocol BuzzerLine: AnyObject {
    /// Drives the buzzer on or off; false when the line could not be set.
    func set(active: Bool) -> Bool
}

/// The buzzer on an output line requested by `GPIOLineup`.
public final class GPIOBuzzer: BuzzerLine {
    private let lineup: GPIOLineup
    private let output: Int

    public init(lineup: GPIOLineup, output: Int) {
        self.lineup = lineup
        self.output = output
    }

    public func set(active: Bool) -> Bool { lineup.setOutput(output, active: active) }
}
