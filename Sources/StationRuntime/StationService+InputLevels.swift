import Figures
import Foundation
import StationControl
import StationIO
import TrainingEngine

// status's inputs: each input's level as the hot loop last acted on it, in the trainer's words.
extension StationService {
    /// The levels for `status` (call with `switching` held: `current` says whether to blind).
    func inputLevelsForStatus() -> (levels: [InputLevel], stationsWithheld: Bool) {
        // `status` is the handler's side too (the page sends it to every role).
        let blind = !Visibility.shows(.stationInputLevel, to: .handler, runningIn: current?.mode)
        let read = inputLevels.read()
        return (
            Self.describeLevels(
                active: read.active, changedAt: read.changedAt, roles: inputs.roles, stationNames: stationNames,
                now: MonotonicClock.now(), wallNow: Date(), withholdStations: blind),
            blind
        )
    }

    /// Each input in board order (the stations, then the buttons), with its level and since
    /// when; `now` is the monotonic time `wallNow` was read at, so a change's wall time is
    /// `wallNow` less how long ago it was. `withholdStations`: a double-blind session runs, so
    /// only the buttons are given.
    static func describeLevels(
        active: UInt64, changedAt: [UInt64], roles: [InputRole], stationNames: [String], now: UInt64, wallNow: Date,
        withholdStations: Bool
    ) -> [InputLevel] {
        var levels: [InputLevel] = []
        for (line, role) in roles.enumerated() where line < changedAt.count {
            let name: String
            var isStation = false
            switch role {
            case .station(let index):
                if withholdStations { continue }
                name = index < stationNames.count ? stationNames[index] : "\(index + 1)"
                isStation = true
            case .clicker: name = "clicker"
            case .errorButton: name = "error"
            case .readyButton: name = "ready"
            }
            let ago = now > changedAt[line] ? Double(now - changedAt[line]) / 1e9 : 0
            levels.append(
                InputLevel(
                    input: name, isStation: isStation, active: active & (1 << UInt64(line)) != 0,
                    secondsSinceChange: ago, changedAt: ISOTimeFormatter.internetTime(wallNow.addingTimeInterval(-ago)))
            )
        }
        return levels
    }
}
