import Foundation
import TrainingEngine

extension SessionConditions {
    /// The conditions as recorded (text trimmed; nil when nothing is given), or the refusal
    /// naming the value at fault. The one check: lineupctl runs it before it asks, lineupd when
    /// a session starts, and the log's CHECK constraints hold the same ranges.
    public func checked() throws -> SessionConditions? {
        if let t = temperatureC, !(t.isFinite && Self.temperatures.contains(t)) {
            throw SessionLogError.invalidInput(
                "--temperature \(Self.text(t)): a room's temperature in °C is between \(Int(Self.temperatures.lowerBound)) and \(Int(Self.temperatures.upperBound))"
            )
        }
        if let h = humidityPercent, !(h.isFinite && (0...100).contains(h)) {
            throw SessionLogError.invalidInput(
                "--humidity \(Self.text(h)): relative humidity is a percentage, 0 to 100")
        }
        let text = text.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.flatMap { $0.isEmpty ? nil : $0 }
        if temperatureC == nil, humidityPercent == nil, text == nil { return nil }
        return SessionConditions(temperatureC: temperatureC, humidityPercent: humidityPercent, text: text)
    }
}
