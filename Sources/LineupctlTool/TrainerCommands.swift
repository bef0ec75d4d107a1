import ArgumentParser
import Foundation
import SessionLog
import StationControl

/// `lineupctl session note ID TEXT`: a comment after the session (the study's "suggestions
/// and comments"), appended to the log, never edited.
struct SessionNoteCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "note",
        abstract: "Add a comment to a session after it (appended; earlier notes stay as written).",
        discussion: """
            Example:
              lineupctl session note 3f2a9c1e "Aino was distracted by the dog next door in rounds 3 and 4"

            """ + additionNote)
    @OptionGroup var target: AdditionOptions
    @Argument(help: "The session's id or id prefix (lineupctl sessions).") var session: String
    @Argument(help: "The comment.") var text: String

    func run() throws {
        try researcherCommand {
            let id = try target.add(
                direct: { try $0.noteSession(session, text: text).id },
                daemon: { client throws(ControlClientError) in
                    try client.noteSession(SessionNoteEntry(session: session, text: text))
                })
            if target.log.json { return try printJSON(["id": id]) }
            say("note added to session \(session) (\(id.prefix(8)))")
        }
    }
}

/// `lineupctl simulate INPUT on|off|press`: the simulated station's world by hand. What a
/// trainer uses to try the station without hardware, and what the tests use to press the
/// clicker with the nose at a chosen station.
struct SimulateCommand: ParsableCommand {
    enum Move: String, ExpressibleByArgument, CaseIterable {
        case on, off, press
    }

    static let configuration = CommandConfiguration(
        commandName: "simulate",
        abstract: "Move the simulated lineup by hand: a nose at a station, or a button (lineupd --simulate only).",
        discussion: """
            INPUT is a station (its name or number), clicker, error or ready. `on` and `off` \
            put the nose at a station or take it away (or hold a button down and let it go); \
            `press` presses a button and lets it go 50 ms later. A real board refuses it.

            Examples:
              lineupctl simulate B on
              lineupctl simulate clicker press
              lineupctl simulate B off
            """)
    @OptionGroup var socket: SocketOptions
    @Argument(help: "A station (name or number), clicker, error or ready.") var input: String
    @Argument(help: "on, off or press.") var move: Move

    func run() throws {
        try controlCommand {
            let client = socket.client
            switch move {
            case .on: try client.simulate(SimulatedInput(input: input, active: true))
            case .off: try client.simulate(SimulatedInput(input: input, active: false))
            case .press:
                try client.simulate(SimulatedInput(input: input, active: true))
                // Longer than any debounce window, so the release is a release, not chatter.
                usleep(50_000)
                try client.simulate(SimulatedInput(input: input, active: false))
            }
        }
    }
}
