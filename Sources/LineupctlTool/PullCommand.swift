import ArgumentParser
import Foundation
import SessionLog

/// `lineupctl pull`: each station's log fetched over ssh (a consistent copy, `lineupctl
/// backup -` run there) and merged into the lab log with the same merge as `lineupctl merge`.
struct PullCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pull",
        abstract: "Fetch station logs over ssh and merge them into one lab log; pulling twice adds nothing.",
        discussion: """
            For each host, runs `ssh HOST lineupctl backup -` (a consistent copy of the \
            station's log, safe while lineupd runs), keeps what comes back in a temporary \
            file, and merges it into the lab log as lineupctl merge does (same matching of \
            dogs, samples, handlers and programs). Hosts are pulled one after another; a host \
            that fails gets one line on stderr, the others are still merged, and the exit \
            status is 1. The ssh login must be able to read the station's log (a member of the \
            station's group). \
            A lab with a PostgreSQL server is better served by the lab store (docs/lab.md): each \
            station syncs as it goes instead of being copied whole, dogs of one name on two \
            stations stay two dogs, and `stats --lab` reads it.

            Examples:
              lineupctl pull pi-1 pi-2 --into lab.db
              lineupctl pull lab@pi-3 --into lab.db --ssh "ssh -i /home/me/.ssh/station_key" --remote-lineupctl /usr/local/bin/lineupctl
            """)
    @Argument(help: "Stations to pull from, as ssh takes them (pi-1, lab@10.0.0.21).") var hosts: [String]
    @Option(help: "The lab log to merge into (created if missing).") var into: String
    @Option(
        name: .customLong("ssh"),
        help: ArgumentHelp(
            "The ssh command, split at spaces (no quoting), e.g. \"ssh -i KEY -p 2222\".", valueName: "command"))
    var sshCommand = "ssh"
    @Option(help: ArgumentHelp("lineupctl on the stations.", valueName: "path")) var remoteLineupctl = "lineupctl"
    @Option(
        help: ArgumentHelp(
            "The log on the stations (default: theirs, $LINEUP_DB else \(SessionLog.defaultPath)).", valueName: "path"
        ))
    var remoteDb: String?
    @Flag(help: "Print one JSON array: per host, what was merged or why not.") var json = false

    func validate() throws {
        if hosts.isEmpty { throw ValidationError("name at least one station to pull from") }
        if sshWords.isEmpty { throw ValidationError("--ssh must name a command") }
    }

    var sshWords: [String] { sshCommand.split(separator: " ").map(String.init) }

    struct Pulled: Encodable {
        var host: String
        var merged: MergeSummary?
        var error: String?
    }

    func run() throws {
        var anyFailed = false
        try researcherCommand {
            guard let ssh = executablePath(sshWords[0]) else {
                throw PullError("the ssh command \(sshWords[0]) is not found (give it with --ssh)")
            }
            // The lab log is created only once a copy has come back: a pull that fetched nothing
            // leaves nothing behind. Where it would go is checked first, for one message, not one a host.
            var lab = FileManager.default.fileExists(atPath: into) ? try SessionLog(path: into) : nil
            if lab == nil {
                let parent = (into as NSString).deletingLastPathComponent
                guard access(parent.isEmpty ? "." : parent, W_OK) == 0 else {
                    throw PullError("cannot create \(into): \(String(cString: strerror(errno)))")
                }
            }
            let scratch = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: scratch) }
            var results: [Pulled] = []
            for (index, host) in hosts.enumerated() {
                do {
                    let copy = "\(scratch)/\(index).db"
                    try fetch(host, ssh: ssh, to: copy, scratch: scratch)
                    let name = host + (remoteDb.map { ":" + $0 } ?? "")
                    if lab == nil { lab = try SessionLog(path: into) }
                    let summary = try lab!.merge(from: copy, name: name)
                    try? FileManager.default.removeItem(atPath: copy)
                    results.append(Pulled(host: host, merged: summary))
                    if !json { say(describeMerge(summary)) }
                } catch {
                    anyFailed = true
                    let message = String(describing: error)
                    results.append(Pulled(host: host, error: message))
                    printError("\(host): \(message)")
                }
            }
            if json { try printJSON(results) }
        }
        if anyFailed { throw ExitCode(1) }
    }

    /// Runs the backup on `host` with its standard output into `path`; a failure says what
    /// went wrong in the station's or ssh's own words.
    func fetch(_ host: String, ssh: String, to path: String, scratch: String) throws {
        let remote =
            [remoteLineupctl, "backup"] + (remoteDb.map { ["--db", $0] } ?? []) + ["-"]
        let process = Process()
        process.executableURL = URL(fileURLWithPath: ssh)
        // ssh joins its arguments into one line for the remote shell: each word is quoted.
        process.arguments = Array(sshWords.dropFirst()) + [host, remote.map(shellQuoted).joined(separator: " ")]
        let errPath = path + ".stderr"
        guard FileManager.default.createFile(atPath: path, contents: nil),
            FileManager.default.createFile(atPath: errPath, contents: nil),
            let out = FileHandle(forWritingAtPath: path), let err = FileHandle(forWritingAtPath: errPath)
        else { throw PullError("cannot write a temporary file in \(scratch)") }
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        try? out.close()
        try? err.close()
        let said =
            (try? String(contentsOfFile: errPath, encoding: .utf8))?.split(separator: "\n")
            .last { !$0.trimmingCharacters(in: .whitespaces).isEmpty }.map(String.init) ?? ""
        let status = process.terminationStatus
        if process.terminationReason == .uncaughtSignal {
            throw PullError("\(sshWords[0]) was killed by signal \(status)")
        }
        switch status {
        case 0: break
        case 255 where URL(fileURLWithPath: ssh).lastPathComponent == "ssh":
            throw PullError("cannot reach it over ssh: \(said.isEmpty ? "ssh exited with 255" : said)")
        case 126, 127:
            throw PullError(
                "\(remoteLineupctl) is not found or cannot run there (give its path with --remote-lineupctl): \(said)")
        default:
            throw PullError("lineupctl backup failed there (exit status \(status)): \(said)")
        }
        // What came back must be a database, not an older lineupctl's "backed up to -".
        let header = (try? FileHandle(forReadingFrom: URL(fileURLWithPath: path)).read(upToCount: 16)) ?? nil
        guard let header, header == Data("SQLite format 3\0".utf8) else {
            throw PullError(
                "what came back is not a SQLite database (\(header?.count ?? 0 == 0 ? "nothing came back" : "is lineupctl there older than backup -?"))"
            )
        }
    }

    /// The full path of a command as the shell would find it on $PATH.
    func executablePath(_ command: String) -> String? {
        if command.contains("/") { return FileManager.default.isExecutableFile(atPath: command) ? command : nil }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = "\(directory)/\(command)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    func temporaryDirectory() throws -> String {
        var template = Array(
            FileManager.default.temporaryDirectory.appendingPathComponent("lineup-pull-XXXXXX").path.utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw PullError(
                "cannot make a temporary directory in \(FileManager.default.temporaryDirectory.path): \(String(cString: strerror(errno)))"
            )
        }
        return String(cString: made)
    }
}

struct PullError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A word as a POSIX shell reads it back unchanged: bare when it is plain, else in single quotes.
func shellQuoted(_ word: String) -> String {
    let plain = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./:=@%+,-")
    if !word.isEmpty && word.allSatisfy({ plain.contains($0) }) { return word }
    return "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
}

/// One merged log in a line, as `merge` and `pull` print it.
func describeMerge(_ s: MergeSummary) -> String {
    "\(s.source): station \(s.stationId.prefix(8)): \(s.sessions) session(s), \(s.trials) trial(s), "
        + "\(s.events) event(s) added; dogs \(s.dogsAdded) added, \(s.dogsMatched) matched by name; "
        + "samples \(s.samplesAdded) added, \(s.samplesMatched) matched by label"
        + s.correctionsRefused.map { "\n\(s.source): \($0)" }.joined()
}
