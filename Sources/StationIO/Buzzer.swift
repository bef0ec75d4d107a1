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

/// Output lines the station drives (station LEDs or valves, the buzzer), by index in the order
/// they were requested. `GPIOLineup` drives real lines; `SimulatedLineup` keeps levels.
public protocol OutputDriver: AnyObject {
    /// Sets output `index`; false when the line could not be set. Never allocates.
    @discardableResult
    func setOutput(_ index: Int, active: Bool) -> Bool
}

extension GPIOLineup: OutputDriver {}

/// The buzzer on one of a driver's outputs.
public final class OutputBuzzer: BuzzerLine {
    private let driver: any OutputDriver
    private let index: Int

    public init(driver: any OutputDriver, index: Int) {
        self.driver = driver
        self.index = index
    }

    public func set(active: Bool) -> Bool { driver.setOutput(index, active: active) }
}
