import Foundation
import Glibc
import ReadingRows
import SessionLog
import StationControl
import Testing
import TrainingEngine

@testable import StationIO
@testable import StationRuntime

/// Issue 37: a trainer-led exercise's repetitions chosen for a session, within the program's
/// bounds, at the station service (the layer lineupctl, the page and the page's queue all pass
/// through): the session runs that many rounds; a count outside 1 to the exercise's repeats,
/// or on a step that is not trainer-led, is refused in one message naming the step and the
/// bounds, and nothing is started or written.
@Suite(.serialized) struct RepetitionsTests {
    static func station() throws -> (StationService, String) {
        let (service, _, directory) = try InputLevelsTests.station()
        _ = try service.addSample(SampleEntry(label: "T-1", kind: .target))
        for label in ["C-1", "C-2", "C-3"] { _ = try service.addSample(SampleEntry(label: label, kind: .control)) }
        _ = try service.addDog(DogEntry(name: "Rex"))
        return (service, directory + "/lineup.db")
    }

    static func request(step: String = "target-scent/1", repetitions: Int?) -> SessionRequest {
        var request = SessionRequest(dog: "Rex", program: "study", step: step, samples: ["T-1"])
        request.repetitions = repetitions
        request.durationSeconds = 1
        return request
    }

    @Test func aSessionRunsTheRepetitionsChosen() throws {
        let (service, db) = try Self.station()
        defer { service.shutdown() }
        let started = try service.startSession(Self.request(repetitions: 2))
        #expect(started.message?.contains("each repetition (2)") == true, "\(started.message ?? "")")
        #expect(service.status().trials == 2, "\(service.status())")
        // Two rounds of a second each, then a third press starts nothing.
        for round in 1...2 {
            let reply = try service.ready()
            #expect(reply.message == "repetition \(round) of 2 started", "\(reply)")
            #expect(
                InputLevelsTests.eventually { service.status().exercisesDone == round },
                "round \(round) never ended")
        }
        do {
            _ = try service.ready()
            Issue.record("a third round started in a session of 2 repetitions")
        } catch {
            #expect(error.message.contains("every repetition (2)"), "\(error)")
        }
        try service.endSession(suggestions: nil)
        let reader = try SessionLog.openReader(path: db)
        let session = try #require(try reader.sessions(LogFilter()).first)
        #expect(session.results.trials == 2, "\(session)")
    }

    /// Each count refused, and the words that say why: the step and the bounds.
    static let refused: [(String, SessionRequest, String)] = [
        (
            "more than the program's repeats", request(repetitions: 5),
            "step target-scent/1 of study: exercise 1 may be done 1 to 4 times in a session (the program's repeats), not 5"
        ),
        (
            "none", request(repetitions: 0),
            "step target-scent/1 of study: exercise 1 may be done 1 to 4 times in a session (the program's repeats), not 0"
        ),
        (
            "negative", request(repetitions: -3),
            "step target-scent/1 of study: exercise 1 may be done 1 to 4 times in a session (the program's repeats), not -3"
        ),
        (
            "an automated step", request(step: "target-scent/2", repetitions: 2),
            "step target-scent/2 of study: repetitions are chosen for a trainer-led exercise; this step is automated (choose its trials)"
        ),
    ]

    @Test func aCountOutsideTheBoundsIsRefusedAndNothingStarts() throws {
        let (service, db) = try Self.station()
        defer { service.shutdown() }
        for (what, request, message) in Self.refused {
            do {
                _ = try service.startSession(request)
                Issue.record("\(what): started")
                try service.endSession(suggestions: nil)
            } catch {
                #expect(error.code == .badRequest, "\(what): \(error)")
                #expect(error.message == message, "\(what)")
                #expect(service.status().session == nil, "\(what): refused, yet a session runs")
            }
        }
        let reader = try SessionLog.openReader(path: db)
        #expect(try reader.sessions(LogFilter()).isEmpty, "a refused start wrote a session")
        // The bounds' ends are accepted: 1 and the program's 4.
        for n in [1, 4] {
            _ = try service.startSession(Self.request(repetitions: n))
            #expect(service.status().trials == n)
            try service.endSession(suggestions: nil)
        }
    }
}
