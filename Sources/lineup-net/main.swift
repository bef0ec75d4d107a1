import Glibc
import LineupAlertsTool
import LineupSyncTool
import LineupWebTool
import LineupctlTool

// lineup-net: lineupctl, lineup-web, lineup-sync and lineup-alerts in one binary, which the
// package installs once with the four names as symbolic links to it (issue 35: the four share
// most of their code, SwiftNIO and TLS included, and apart they made the package too big for a
// Pi's card). It runs the tool it was started as: /usr/bin/lineup-web is lineup-web; or the
// one named first, `lineup-net web --help`. lineupd is not here: it has no network code.

/// The tools by the names they are installed as, and the short names `lineup-net NAME` takes.
let tools: [(name: String, short: String)] = [
    ("lineupctl", "ctl"), ("lineup-web", "web"), ("lineup-sync", "sync"), ("lineup-alerts", "alerts"),
]

func run(_ tool: String, _ arguments: [String]) async {
    switch tool {
    case "lineupctl": LineupctlTool.Tool.main(arguments)
    case "lineup-web": await LineupWebTool.Tool.main(arguments)
    case "lineup-sync": await LineupSyncTool.Tool.main(arguments)
    default: await LineupAlertsTool.Tool.main(arguments)
    }
}

let arguments = CommandLine.arguments
let invokedAs = String((arguments.first ?? "").split(separator: "/").last ?? "")
if let tool = tools.first(where: { $0.name == invokedAs }) {
    await run(tool.name, Array(arguments.dropFirst()))
} else if arguments.count > 1, let tool = tools.first(where: { $0.name == arguments[1] || $0.short == arguments[1] }) {
    await run(tool.name, Array(arguments.dropFirst(2)))
} else {
    let names = tools.map { "\($0.short) (\($0.name))" }.joined(separator: ", ")
    let said = arguments.count > 1 ? "'\(arguments[1])' is not one of its tools" : "no tool named"
    let line = Array(
        "lineup-net: \(said); run it as one of \(names): lineup-net web --help, or through the link lineup-web\n".utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    exit(64)
}
