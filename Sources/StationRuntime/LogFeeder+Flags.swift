/// The flags `status` reads: each board station's fault now, and the faults counted by kind.
extension LogFeeder {
    func count(_ fault: String) { sensorFaults.withLock { $0[fault, default: 0] += 1 } }

    /// A sensor fault at board station `station`.
    func flag(_ station: Int, _ fault: String, refusedStart: Bool) {
        // A start refused by a station already known stuck or stormy keeps the better name.
        flaggedStations.withLock { flagged in
            if !refusedStart || flagged[station] == nil { flagged[station] = fault }
        }
    }

    func unflag(_ station: Int) { flaggedStations.withLock { _ = $0.removeValue(forKey: station) } }

    /// The start went ahead: nothing was active at it any more.
    func unflagActiveAtStart() {
        flaggedStations.withLock { flagged in flagged = flagged.filter { $0.value != "active-at-start" } }
    }

    /// Board stations whose edge descriptor cannot be read.
    func flag(unreadable stations: [Int]) {
        flaggedStations.withLock { flagged in for s in stations { flagged[s] = "unreadable" } }
    }

    func unflag(readable stations: [Int]) {
        flaggedStations.withLock { flagged in
            for s in stations where flagged[s] == "unreadable" { flagged.removeValue(forKey: s) }
        }
    }

    /// A trusted edge at a station ends the flags it disproves: silent (it saw something) and
    /// active-at-start (it is clear now).
    func clearFlag(_ station: Int, active: Bool) {
        flaggedStations.withLock { flagged in
            guard let fault = flagged[station] else { return }
            if (fault == "silent" && active) || (fault == "active-at-start" && !active) {
                flagged.removeValue(forKey: station)
            }
        }
    }
}
