import Foundation
import SessionLog
import StationControl
import Testing
import TrainingEngine

/// `lineupctl guess` through a running lineupd: recorded for the trial to come, one per trial,
/// refused after the dog's indication, outside a double-blind session and for a station not in
/// the lineup, each refusal one line and exit 1, and no reply naming anything of the layout.
@Suite(.serialized, .ownThreads) struct HandlerGuessDaemonTests {
    /// A step whose false alert does not end the trial, so a guess can come after an indication
    /// within the same trial.
    static let program = """
        name = "guess-test"
        title = "A double-blind block whose dog may search on after a false alert"
        description = "For the handler's guess: an indication that does not end the trial."

        [[phases]]
        id = "p"
        title = "Discrimination"
        description = "The target among four controls, double blind."

        [[phases.steps]]
        id = "1"
        title = "Target among four controls, searching on after a false alert"
        mode = "double-blind"
        lineup = { stations = 5, targets = 1, controls = 4 }
        hold_s = 2.0
        inter_trial_s = 15
        after_false_alert = "continue"

        [[phases.steps.exercises]]
        id = "1"
        title = "Block of 3"
        instruction = "Double blind: only the loading assistant sees the layout."
        duration_s = 1800
        trials = 3

        """

    @Test func theHandlersGuessIsRecordedOncePerTrialBeforeTheIndication() throws {
        let programs = FileManager.default.temporaryDirectory.appendingPathComponent("guess-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: programs, withIntermediateDirectories: true)
        try Self.program.write(toFile: programs + "/guess-test.toml", atomically: true, encoding: .utf8)
        // No virtual dog: the only noses are the test's own, at known stations and times.
        guard
            let daemon = try ServingStationTests.Daemon(
                speed: 30, extra: ["--no-virtual-dog", "--programs", programs])
        else { return }
        defer { if daemon.process.isRunning { _ = daemon.terminate() } }
        #expect(daemon.waitReady())
        let client = daemon.client
        let env = ["LINEUP_SOCKET": daemon.socket]
        func refused(_ arguments: [String], _ message: String) throws {
            let result = try lineupctl(arguments, environment: env)
            #expect(result.status == 1, "\(arguments): \(result.stdout)")
            #expect(result.stdout.isEmpty, "\(arguments)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
            #expect(!result.stderr.contains("target"), "a refusal must not speak of the target: \(result.stderr)")
        }

        try refused(["guess", "C"], "no session is running")
        _ = try client.startSession(
            SessionRequest(
                dog: "Rex", program: "guess-test", step: "p/1", handler: "H-7", seed: 5, unlabelled: true))
        // Before the first ready: the guess is for trial 1.
        let first = try lineupctl(["guess", "C"], environment: env)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout == "Guess recorded for trial 1: station C.\n", "\(first.stdout)")
        try refused(["guess", "B"], "a guess is already recorded for trial 1: one guess per trial, the first stands")
        try refused(["guess", "Z"], "no station \"Z\" in this session's lineup")

        // Trial 1: the test's nose holds at the target (the loading assistant's view says
        // where), a hit. Trial 2: it holds at a control's station, a false alert, and the dog
        // may search on (the step's `after_false_alert = "continue"`; a search of 60 s at 30 ×,
        // so a loaded machine cannot end it first): once that indication is in the log, a
        // guess for trial 2 is too late.
        // Read from the file itself: lineupctl's readings withhold a running double-blind
        // session's events (LiveDoubleBlindReadingTests), and this test waits on the log.
        func indications() -> Int {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
            p.arguments = ["-readonly", daemon.db, "SELECT count(*) FROM event WHERE kind = 'indication'"]
            guard let result = try? runToEnd(p), result.status == 0 else { return 0 }
            return Int(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        }
        func holdAt(_ kind: SampleKind, trial: Int) throws {
            #expect(
                eventually(30) {
                    try? client.ready()
                    return [StationState.searching, .holding].contains((try? client.status().state) ?? .idle)
                }, "trial \(trial) never started")
            let station = try #require(try client.layout(view: .assistant).first { $0.kind == kind }).station
            try client.simulate(SimulatedInput(input: station, active: true))
            #expect(eventually(30) { indications() >= trial }, "the held nose never became an indication")
            try client.simulate(SimulatedInput(input: station, active: false))
        }
        try holdAt(.target, trial: 1)
        #expect(eventually(30) { (try? client.status().trialsDone) == 1 }, "trial 1 never ended")
        try holdAt(.control, trial: 2)
        try refused(
            ["guess", "A"], "the dog has already indicated in trial 2: a guess must come before the dog's indication")
        try client.abort()
        try client.endSession(suggestions: nil)

        // A trainer-led session takes no guess.
        _ = try client.startSession(
            SessionRequest(dog: "Ada", program: "study", step: "indicate/1", mode: .trainerLed))
        try refused(["guess", "C"], "the handler's guess is recorded in double-blind sessions only")
        try client.endSession(suggestions: nil)
        #expect(daemon.terminate().status == 0)

        // The one guess is in the log, for trial 1, and counted against trial 1's layout.
        let reader = try SessionLog.openReader(path: daemon.db)
        let layout = try reader.read { db in
            try String.fetchOne(db, sql: "SELECT t.layout FROM trial_current t WHERE t.number = 1")
        }
        let targetAtC = try #require(layout).split(separator: ";").contains { $0.hasPrefix("3:target") }
        let stats = try lineupctl(["stats", "--guesses", "--json", "--db", daemon.db])
        #expect(stats.status == 0, "\(stats.stderr)")
        let rows = try JSONSerialization.jsonObject(with: Data(stats.stdout.utf8)) as? [[String: Any]]
        #expect(rows?.count == 1)
        #expect(rows?.first?["group"] as? String == "H-7")
        #expect(rows?.first?["guesses"] as? Int == 1)
        #expect(rows?.first?["hits"] as? Int == (targetAtC ? 1 : 0))
    }
}
