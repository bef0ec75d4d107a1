import Foundation
import StationControl
import Testing
import TrainingEngine

@testable import StationIO
@testable import StationRuntime

/// Issue 32, the handler's side of a double-blind step at the station service, the layer every
/// surface passes through (lineupctl and the page both send `SessionRequest`): who may fix its
/// seed or layouts (`SessionAsker.mayFixBlindLayouts`), and what the handler is told (the start's
/// answer, the layout's refusal, status) names no assistant's command or instruction.
@Suite(.serialized) struct BlindSessionStartTests {
    static let labels = ["T-1", "C-1", "C-2", "C-3", "C-4", "C-5"]

    static func station() throws -> StationService {
        let (service, _, _) = try InputLevelsTests.station()
        for label in labels {
            _ = try service.addSample(SampleEntry(label: label, kind: label.hasPrefix("T") ? .target : .control))
        }
        _ = try service.addDog(DogEntry(name: "Rex"))
        return service
    }

    static func request(
        step: String = "phase-3/1", asker: SessionAsker?, seed: UInt64? = nil, layouts: [[SampleKind]]? = nil
    ) -> SessionRequest {
        var request = SessionRequest(
            dog: "Rex", program: "research-5-station", step: step, trials: 2, samples: labels, seed: seed,
            layouts: layouts)
        request.asker = asker
        return request
    }

    /// Each asker and what it fixes, and whether lineupd starts it: the page never fixes a
    /// double-blind step's seed or layouts; the station (lineupctl; an older one sends no asker) may.
    static let cases: [(String, SessionRequest, Bool)] = [
        ("the page with a seed", request(asker: .page, seed: 4242), false),
        (
            "the page with layouts",
            request(asker: .page, layouts: [[.target, .control, .control, .control, .control]]), false
        ),
        (
            "the page with both",
            request(asker: .page, seed: 1, layouts: [[.control, .target, .control, .control, .control]]), false
        ),
        ("the page, the station drawing", request(asker: .page), true),
        ("lineupctl with a seed", request(asker: .station, seed: 4242), true),
        (
            "lineupctl with layouts",
            request(asker: .station, layouts: [[.target, .control, .control, .control, .control]]), true
        ),
        ("an older lineupctl with a seed", request(asker: nil, seed: 4242), true),
        // Not double-blind: the handler sees the layouts anyway, so a seed fixes nothing hidden.
        ("the page with a seed, an automated step", request(step: "phase-1/1", asker: .page, seed: 4242), true),
    ]

    @Test func onlyTheStationFixesADoubleBlindStepsSeedOrLayouts() throws {
        let service = try Self.station()
        defer { service.shutdown() }
        for (what, request, starts) in Self.cases {
            do {
                _ = try service.startSession(request)
                #expect(starts, "\(what): started")
                try service.endSession(suggestions: nil)
            } catch {
                #expect(!starts, "\(what): refused: \(error)")
                #expect(error.code == .blind, "\(what): \(error)")
                #expect(error.message.contains("may not fix its seed or layouts"), "\(what): \(error)")
                #expect(service.status().session == nil, "\(what): refused, yet a session runs")
            }
        }
    }

    /// Everything the handler's side is told in a double-blind block: the start's answer, the
    /// layout's refusal, status (sent to every page) before the first trial.
    @Test func theHandlerIsToldNoAssistantsCommandOrInstruction() throws {
        let service = try Self.station()
        defer { service.shutdown() }
        let started = try service.startSession(Self.request(asker: .page))
        var told = [started.message ?? ""]
        do {
            _ = try service.layout(view: .handler)
            Issue.record("the handler's view of a double-blind layout was answered")
        } catch {
            #expect(error.code == .blind)
            told.append(error.message)
        }
        told.append(service.status().activity ?? "")
        // The assistant is given it (so the check can fail on the layout's words).
        #expect(try service.layout(view: .assistant).count == 5)
        for text in told {
            #expect(!text.contains("--assistant"), "\(text)")
            #expect(!text.lowercased().contains("load trial"), "\(text)")
        }
        #expect(told.last == "trial 1 of 2 waits for ready", "\(told)")
        try service.endSession(suggestions: nil)
    }
}
