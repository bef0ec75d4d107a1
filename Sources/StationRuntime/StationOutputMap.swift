import StationConfig
import StationIO

/// The board's output lines in the order they are requested: each station's output (LED or
/// valve) where it has one, then the buzzer, then the feeder.
public struct StationOutputMap {
    public var lines: [OutputLine] = []
    /// Each station's output index, or -1.
    var stationIndex: [Int] = []
    var buzzerIndex: Int?
    var buzzerPulseMilliseconds = 15
    /// The feeder's output index, and its delay and pulse, when the board has one.
    public private(set) var feederIndex: Int?
    public private(set) var feeder: FeederSpec?
    var names: [String] = []

    public init(board: StationConfiguration) {
        for station in board.stations {
            if let output = station.output {
                stationIndex.append(lines.count)
                lines.append(output)
                names.append(station.name)
            } else {
                stationIndex.append(-1)
            }
        }
        if let buzzer = board.buzzer {
            buzzerIndex = lines.count
            lines.append(buzzer.output)
            names.append("buzzer")
            buzzerPulseMilliseconds = buzzer.pulseMilliseconds
        }
        if let feeder = board.feeder {
            feederIndex = lines.count
            lines.append(feeder.output)
            names.append("feeder")
            self.feeder = feeder
        }
    }
}
