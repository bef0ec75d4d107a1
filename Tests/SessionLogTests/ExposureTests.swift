import Foundation
import Testing
import TrainingEngine

@testable import SessionLog

/// A dog's exposure to a sample (docs/figures.md, "Exposure and novelty"): its earlier trials,
/// of any outcome, whose layout put the sample in a station; a correction is not counted again.
@Suite struct ExposureTests {
    @Test func exposureCountsEachDogsTrialsAbortedIncludedCorrectionsOnce() throws {
        let log = try SessionLog(path: temporaryLogPath())
        let t1 = try log.addSample(SampleRecord(label: "T-1", kind: .target))
        let c1 = try log.addSample(SampleRecord(label: "C-1", kind: .control))
        let rex = DogRecord(name: "Rex")
        let ada = DogRecord(name: "Ada")
        let rexSession = SessionRecord(dogId: rex.id, mode: .automated)
        let adaSession = SessionRecord(dogId: ada.id, mode: .automated)
        func trial(_ session: SessionRecord, _ number: Int, _ outcome: TrialOutcome, control: Bool) -> TrialRecord {
            TrialRecord(
                sessionId: session.id, number: number,
                layout: [
                    StationSlot(station: 1, sampleId: t1.id, kind: .target, novel: number == 1),
                    StationSlot(station: 2, sampleId: control ? c1.id : nil, kind: control ? .control : .blank),
                ], outcome: outcome, indicatedStation: outcome == .hit ? 1 : nil, started: .now(), ended: .now())
        }
        let first = trial(rexSession, 1, .hit, control: true)
        try log.append([
            rex, ada, rexSession, adaSession, first, trial(rexSession, 2, .aborted, control: false),
            trial(rexSession, 3, .miss, control: false), trial(adaSession, 1, .miss, control: true),
        ])
        // A correction of Rex's first trial repeats its layout: still one trial.
        _ = try log.correctTrial(first.id.uuidString, outcome: .miss, indicatedStation: nil, reason: "video: no hold")

        let rexExposure = try log.reader.exposure(dog: rex.id.uuidString)
        #expect(rexExposure == [t1.id.uuidString.lowercased(): 3, c1.id.uuidString.lowercased(): 1])
        #expect(
            try log.reader.exposure(dog: ada.id.uuidString)
                == [t1.id.uuidString.lowercased(): 1, c1.id.uuidString.lowercased(): 1])
        #expect(try log.reader.exposure(dog: UUID().uuidString).isEmpty)
        // samples show's uses per dog are the same count.
        let details = try log.reader.sample(id: t1.id.uuidString.lowercased())
        #expect(details.usedBy.map(\.dog) == ["Ada", "Rex"] && details.usedBy.map(\.uses) == [1, 3])
        // The novelty recorded with each trial, kept by the correction.
        let trials = try log.reader.trials().filter { $0.dog == "Rex" }.sorted { $0.number < $1.number }
        #expect(trials.map { $0.layout[0].novel } == [true, false, false])
        // Not given (a hand-made layout) or no sample: not recorded.
        #expect(trials.allSatisfy { $0.layout[1].novel == nil })
    }
}
