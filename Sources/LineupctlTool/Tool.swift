/// lineupctl's entry point: its own executable's (`swift build --product lineupctl`) and
/// lineup-net's, the one binary the package installs for lineupctl and the network tools.
public enum Tool {
    public static func main(_ arguments: [String]) { Lineupctl.main(arguments) }
}
