import StationControl

/// The faults `status` counts since lineupd started, by kind. Which stations are flagged now is
/// not kept here: the engine's snapshot and the hot loop's lines out of service say it.
extension LogFeeder {
    func count(_ fault: StationFault) { sensorFaults.withLock { $0[fault, default: 0] += 1 } }
}
