import StationConfig

/// The board's inputs in the fixed order the hot loop indexes them by: the stations, then
/// the buttons present. Built once from the configuration.
public struct InputMap: Sendable, Hashable {
    public let roles: [InputRole]
    public let lines: [InputLine]
    public let stationCount: Int

    public init(configuration: StationConfiguration) {
        var roles = configuration.stations.indices.map { InputRole.station($0) }
        var lines = configuration.stations.map(\.input)
        let buttons: [(InputRole, InputLine?)] = [
            (.clicker, configuration.buttons.clicker),
            (.errorButton, configuration.buttons.error),
            (.readyButton, configuration.buttons.ready),
        ]
        for case (let role, let line?) in buttons {
            roles.append(role)
            lines.append(line)
        }
        self.roles = roles
        self.lines = lines
        self.stationCount = configuration.stations.count
    }

    public var count: Int { roles.count }

    /// The line index of a role, if the board has it.
    public func line(of role: InputRole) -> UInt32? {
        roles.firstIndex(of: role).map { UInt32($0) }
    }

    /// The role of a line index; lines outside the map have none.
    @inline(__always)
    public func role(of line: UInt32) -> InputRole? {
        Int(line) < roles.count ? roles[Int(line)] : nil
    }
}
