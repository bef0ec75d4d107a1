import ArgumentParser
import Foundation
import SessionLog

/// `lineupctl merge`: several stations' logs into one lab log.
struct MergeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "merge",
        abstract: "Merge station logs (copies: lineupctl backup) into one lab log; merging twice adds nothing.",
        discussion: """
            Every row keeps its id and its station (`station_id`: the identity a log is given \
            when it is created). The same dog on two stations is matched by name (any case), \
            the same sample by label (its kind must agree), a handler by code, a program by the \
            hash of its text: the project's rule, in docs/session-log.md ("Several stations"). \
            Every command, stats and report work on the merged file. \
            A lab with a PostgreSQL server is better served by the lab store (docs/lab.md): each \
            station syncs as it goes instead of being copied whole, dogs of one name on two \
            stations stay two dogs, and `stats --lab` reads it.

            Example:
              lineupctl merge pi-1.db pi-2.db --into lab.db
            """)
    @Argument(help: "Station logs to merge (copies made with lineupctl backup).") var sources: [String]
    @Option(help: "The lab log to merge into (created if missing).") var into: String
    @Flag(help: "Print one JSON object per merged log.") var json = false

    func validate() throws {
        if sources.isEmpty { throw ValidationError("name at least one station log to merge") }
    }

    func run() throws {
        try researcherCommand {
            for source in sources {
                guard FileManager.default.fileExists(atPath: source) else {
                    throw SessionLogError.databaseMissing(path: source)
                }
                // The lab log is written: never onto a source's -wal or -shm (the source
                // itself is refused by its identity, below).
                try SessionLog.refuseLogFiles(output: into, log: source, writing: "lab log")
            }
            // Every source whole (integrity_check) before the lab log is touched: a damaged
            // one refused halfway would leave the lab log holding the sources before it.
            // And nothing `export` would refuse (issue 33: a merged station 300000000 left the
            // whole lab log unexportable): its own check, asked of each source.
            for source in sources {
                let reader = try SessionLog.openReader(path: source, check: .integrity)
                do {
                    _ = try reader.exportQuery(.trials)
                } catch let error as SessionLogError {
                    throw MergeRefusal(source: source, problem: error.description)
                }
            }
            let created = !FileManager.default.fileExists(atPath: into)
            var summaries: [MergeSummary] = []
            do {
                let lab = try SessionLog(path: into)
                for source in sources {
                    let s = try lab.merge(from: source, check: .none)
                    summaries.append(s)
                    if !json { say(describeMerge(s)) }
                }
            } catch {
                // A refused merge into a new file leaves no file behind (the lab log is
                // closed here: `lab` is out of scope).
                if created {
                    for file in [into, into + "-wal", into + "-shm"] {
                        try? FileManager.default.removeItem(atPath: file)
                    }
                }
                throw error
            }
            if json { try printJSON(summaries) }
        }
    }
}

/// A source `merge` refuses before touching the lab log: what `export` would refuse in it.
struct MergeRefusal: Error, CustomStringConvertible {
    var source: String
    var problem: String
    var description: String { "\(source) is not merged: \(problem)" }
}
