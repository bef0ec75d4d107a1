// The `[feeder]` section: a relay or a treat dispenser's trigger pulsed after each click.

extension Parser {
    /// The feeder's delay may be 0 (the line goes on as soon as the click is out) up to 5 s:
    /// the project's bound, since food long after the click no longer follows it.
    static let feederDelayRange = 0...5000
    /// A relay needs some milliseconds to pull; a trigger held over 5 s is a wiring mistake.
    static let feederPulseRange = 1...5000

    mutating func feeder(_ root: TableReader) throws(StationConfigError) -> FeederSpec? {
        guard let feeder = try root.subtable("feeder") else { return nil }
        try feeder.checkKeys(["line", "chip", "offset", "active_low", "delay_ms", "pulse_ms"])
        if !feeder.has("line") && !feeder.has("chip") && !feeder.has("offset") {
            throw feeder.error(.missingKey, "line", "missing: the feeder's output line (\(lineKeysHint))")
        }
        let locator = try self.locator(in: feeder)
        let activeLow = try feeder.bool("active_low") ?? false
        let defaults = FeederSpec(output: OutputLine(locator: locator))
        let delay = try feeder.int("delay_ms", in: Self.feederDelayRange, unit: " ms") ?? defaults.delayMilliseconds
        let pulse = try feeder.int("pulse_ms", in: Self.feederPulseRange, unit: " ms") ?? defaults.pulseMilliseconds
        return FeederSpec(
            output: OutputLine(locator: locator, activeLow: activeLow), delayMilliseconds: delay,
            pulseMilliseconds: pulse)
    }
}
