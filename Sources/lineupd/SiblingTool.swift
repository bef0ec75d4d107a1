import Foundation

/// How to run `tool` (lineupctl) from the directory lineupd was started in: the one beside
/// this lineupd, spelt as lineupd was (`.build/release/lineupctl` after
/// `.build/release/lineupd`), or the bare name when lineupd was found on the PATH. What it
/// prints must run as printed.
func siblingTool(_ tool: String, invokedAs argument0: String = CommandLine.arguments.first ?? "") -> String {
    guard let slash = argument0.lastIndex(of: "/") else { return tool }
    return String(argument0[...slash]) + tool
}
