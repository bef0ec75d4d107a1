/// lineup-web's entry point: its own executable's (`swift build --product lineup-web`) and
/// lineup-net's, the one binary the package installs for lineupctl and the network tools.
public enum Tool {
    public static func main(_ arguments: [String]) async { await LineupWeb.main(arguments) }
}
