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
            }
            let lab = try SessionLog(path: into)
            var summaries: [MergeSummary] = []
            for source in sources {
                let s = try lab.merge(from: source)
                summaries.append(s)
                if !json { say(describeMerge(s)) }
            }
            if json { try printJSON(summaries) }
        }
    }
}
