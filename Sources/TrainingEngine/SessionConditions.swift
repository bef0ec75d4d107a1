/// The room a session ran in (issue 38): temperature, relative humidity and anything else the
/// researcher notes (wind, a door left open, the air conditioning). A dog's detection limit
/// changes with them (Kane et al. 2024: 3.5 times worse at 40 °C and 70 % RH than at 21 °C and
/// 50 %), so thresholds are compared across them. Given when the session starts.
public struct SessionConditions: Sendable, Hashable, Codable {
    /// Degrees Celsius.
    public var temperatureC: Double?
    /// Relative humidity, percent.
    public var humidityPercent: Double?
    /// Free text.
    public var text: String?

    /// The temperatures a station can be in and a person can work in; outside, a slip (°F, a
    /// missing decimal point) is far more likely than the room.
    public static let temperatures: ClosedRange<Double> = -40...60

    public init(temperatureC: Double? = nil, humidityPercent: Double? = nil, text: String? = nil) {
        self.temperatureC = temperatureC
        self.humidityPercent = humidityPercent
        self.text = text
    }

    /// Itself, or nil when nothing was given (a session's row with no conditions).
    public var recorded: SessionConditions? {
        temperatureC == nil && humidityPercent == nil && text == nil ? nil : self
    }

    /// `21.5 °C, 50 % RH; door open`.
    public var description: String {
        var parts: [String] = []
        if let t = temperatureC { parts.append("\(Self.text(t)) °C") }
        if let h = humidityPercent { parts.append("\(Self.text(h)) % RH") }
        let measured = parts.joined(separator: ", ")
        return [measured.isEmpty ? nil : measured, text].compactMap { $0 }.joined(separator: "; ")
    }

    /// A measurement as the station words it: `21` for 21.0, `21.5`.
    public static func text(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e9 ? String(Int(value)) : "\(value)"
    }
}
