import StationControl

/// `status`'s flagged stations, from what the hot thread publishes: the engine's sensor masks
/// (its own stuck, silent and chatter checks and the station that refused a start) and the hot
/// loop's lines out of service. Nothing here is a second copy of when a flag clears.
extension EngineSnapshot.Values {
    /// Each flagged board station (in board order) with one fault: the one that most explains
    /// what a person sees. An unreadable input gives no edges at all, a stuck sensor makes the
    /// others moot, and a station active at a start is the mildest (clear it and go on).
    /// `unreadableLines` are board lines (bit i: line i); the masks are the engine's stations,
    /// board station `usedStations[i]` (empty: the same number).
    func flaggedStations(unreadableLines: UInt64, usedStations: [Int], stationNames: [String]) -> [FlaggedStation] {
        var faults: [Int: StationFault] = [:]
        let order: [(UInt64, StationFault)] = [
            (activeAtStart, .activeAtStart), (silent, .silent), (chatter, .chatter), (stuck, .stuck),
        ]
        for (mask, fault) in order {
            var left = mask
            while left != 0 {
                let station = left.trailingZeroBitCount
                left &= left &- 1
                faults[station < usedStations.count ? usedStations[station] : station] = fault
            }
        }
        for line in 0..<min(64, stationNames.count) where unreadableLines & (1 << UInt64(line)) != 0 {
            faults[line] = .unreadable
        }
        return faults.sorted { $0.key < $1.key }.map { station, fault in
            FlaggedStation(
                station: station < stationNames.count ? stationNames[station] : "\(station + 1)", fault: fault)
        }
    }
}
