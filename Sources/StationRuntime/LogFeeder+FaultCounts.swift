import StationControl

/// The faults `status` counts since lineupd started, by kind. They are counted here, where each
/// is logged, so `status`'s counts and the log's fault events agree (the engine keeps no count,
/// and an unreadable input is the hot loop's, not the engine's). Which stations are flagged now
/// is not kept here: the engine's snapshot and the hot loop's lines out of service say it.
extension LogFeeder {
    func count(_ fault: StationFault) { sensorFaults.withLock { $0[fault, default: 0] += 1 } }
}
