import Foundation
import Glibc
import SessionLog
import StationControl
import Testing
import TrainingEngine

/// What the station answers is what happened: the step decides the mode, a research session
/// records its samples, `ready` is the engine's answer and `status` its state.
@Suite(.serialized, .ownThreads) struct SessionTruthTests {
    @Test func theStepDecidesTheModeAndEveryStationHasItsSample() throws {
        guard let daemon = try ServingStationTests.Daemon(speed: 30) else { return }
        defer { if daemon.process.isRunning { _ = daemon.terminate() } }
        #expect(daemon.waitReady())
        let env = ["LINEUP_SOCKET": daemon.socket]
        for label in ["T-1", "C-1", "C-2", "C-3", "C-4"] {
            _ = try daemon.client.addSample(SampleEntry(label: label, kind: label.hasPrefix("T") ? .target : .control))
        }
        // A double-blind step run trainer-led would show the handler the target: refused, one line.
        let contradicts = try lineupctl(
            [
                "session", "start", "--dog", "Rex", "--program", "study", "--step", "discrimination/2", "--mode",
                "trainer-led",
            ],
            environment: env)
        #expect(contradicts.status == 1)
        #expect(
            contradicts.stderr.contains(
                "step discrimination/2 of study is double-blind; --mode trainer-led contradicts it"),
            "\(contradicts.stderr)")
        #expect(contradicts.stderr.split(separator: "\n").count == 1)
        // No samples: refused, naming what is missing; a partial list too (4 controls, and a
        // trial with no target needs a fifth).
        let bare = try lineupctl(
            ["session", "start", "--dog", "Rex", "--program", "study", "--step", "discrimination/2"], environment: env)
        #expect(bare.status == 1 && bare.stderr.contains("lays out stations with no sample"), "\(bare.stderr)")
        let partial = try lineupctl(
            [
                "session", "start", "--dog", "Rex", "--program", "study", "--step", "discrimination/2", "--sample",
                "T-1",
            ],
            environment: env)
        #expect(partial.status == 1 && partial.stderr.contains("control sample"), "\(partial.stderr)")
        let fifth = try lineupctl(
            [
                "session", "start", "--dog", "Rex", "--program", "study", "--step", "discrimination/2", "--trials",
                "20",
                "--sample", "T-1", "--sample", "C-1", "--sample", "C-2", "--sample", "C-3", "--sample", "C-4",
            ], environment: env)
        #expect(fifth.status == 1)
        #expect(fifth.stderr.contains("5 different control samples needed"), "\(fifth.stderr)")
        #expect(!fifth.stderr.contains("usage limit"), "\(fifth.stderr)")
        #expect(try SessionLog.openReader(path: daemon.db).sessions().isEmpty, "a refused start wrote a session")

        // --mode left out: the step's; the samples in every non-blank station of every trial.
        _ = try daemon.client.addSample(SampleEntry(label: "C-5", kind: .control))
        let started = try lineupctl(
            [
                "session", "start", "--dog", "Rex", "--program", "study", "--step", "discrimination/2", "--trials",
                "20",
                "--sample", "T-1", "--sample", "C-1", "--sample", "C-2", "--sample", "C-3", "--sample", "C-4",
                "--sample", "C-5", "--json",
            ], environment: env)
        #expect(started.status == 0, "\(started.stderr)")
        let reply = try JSONDecoder().decode(SessionStarted.self, from: Data(started.stdout.utf8))
        #expect(reply.mode == .doubleBlind)
        // Double-blind: the answer (the handler's page gets it too) says what the station waits for.
        #expect(reply.message?.contains("trial 1 of 20 waits for ready") == true, "\(reply.message ?? "")")
        let layout = try daemon.client.layout(view: .assistant)
        #expect(layout.allSatisfy { $0.kind == .blank || $0.sample != nil }, "\(layout)")
        try daemon.client.abort()
        try daemon.client.endSession(suggestions: nil)

        // --unlabelled: runs, and the session's settings say so.
        let unlabelled = try lineupctl(
            ["session", "start", "--dog", "Rex", "--program", "study", "--step", "discrimination/2", "--unlabelled"],
            environment: env)
        #expect(unlabelled.status == 0, "\(unlabelled.stderr)")
        #expect(unlabelled.stdout.contains("unlabelled"), "\(unlabelled.stdout)")
        try daemon.client.endSession(suggestions: nil)
        #expect(daemon.terminate().status == 0)
        let sessions = try SessionLog.openReader(path: daemon.db).sessions()
        #expect(sessions.count == 2)
        #expect(sessions.allSatisfy { $0.mode == TrainingMode.doubleBlind })
        let settings = try sessions.map { try SessionLog.openReader(path: daemon.db).session(id: $0.id).settings }
        #expect(settings.filter { $0.contains(#""unlabelled":"true""#) }.count == 1, "\(settings)")
        // And the listing says which ran unlabelled.
        let listed = try lineupctl(["sessions", "--db", daemon.db])
        #expect(listed.stdout.components(separatedBy: "double-blind (unlabelled)").count == 2, "\(listed.stdout)")
    }

    /// What only the process shows: the engine's answers reach `lineupctl` over the socket
    /// (its words, its exit status) and `status` is the service's. Every answer and state of
    /// a whole block, in virtual time: StationRuntimeTests' ReadyAndStatusTests.
    @Test func readyAndStatusAreTheEnginesAnswer() throws {
        // A world without a virtual dog: nothing moves but what the test moves.
        // Speed 10: a 6 s search, far longer than the test's questions.
        guard let daemon = try ServingStationTests.Daemon(speed: 10, extra: ["--no-virtual-dog"]) else { return }
        defer { if daemon.process.isRunning { _ = daemon.terminate() } }
        #expect(daemon.waitReady())
        let client = daemon.client
        let env = ["LINEUP_SOCKET": daemon.socket]
        _ = try client.startSession(
            SessionRequest(dog: "Rex", program: "research-5-station", step: "phase-3/1", trials: 2, unlabelled: true))
        var status = try client.status()
        #expect(
            status.state == .waitingForReady && status.trial == 1 && status.trials == 2 && status.trialsDone == 0)
        #expect(status.step == "phase-3/1" && status.program == "research-5-station")
        #expect(status.activity == "trial 1 of 2 waits for ready", "\(status.activity ?? "")")

        // A station active: the start is refused, naming it, exit 1.
        try client.simulate(SimulatedInput(input: "C", active: true))
        let blocked = try lineupctl(["ready"], environment: env)
        #expect(blocked.status == 1)
        #expect(blocked.stderr.contains("trial 1 of 2 did not start: station C is active"), "\(blocked.stderr)")
        status = try client.status()
        #expect(status.state == .blocked && status.trial == 1, "\(status)")
        try client.simulate(SimulatedInput(input: "C", active: false))

        // Started: it says so, and status agrees (trial 1 of 2, time left counting down).
        let go = try lineupctl(["ready"], environment: env)
        #expect(go.status == 0 && go.stdout.contains("Ready: trial 1 of 2 started"), "\(go.stdout) \(go.stderr)")
        status = try client.status()
        #expect(status.state == .searching && status.trial == 1 && status.trialsDone == 0, "\(status)")
        #expect((status.secondsLeft ?? 0) > 0)
        let shown = try lineupctl(["status"], environment: env)
        #expect(
            shown.stdout.contains("State       searching: trial 1 of 2: the dog is searching"), "\(shown.stdout)")
        try client.endSession(suggestions: nil)
        #expect(try client.status().state == .idle)
    }
}
