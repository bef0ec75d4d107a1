/// lineup-alerts's entry point: its own executable's (`swift build --product lineup-alerts`) and
/// lineup-net's, the one binary the package installs for lineupctl and the network tools.
public enum Tool {
    public static func main(_ arguments: [String]) async { await LineupAlerts.main(arguments) }
}
