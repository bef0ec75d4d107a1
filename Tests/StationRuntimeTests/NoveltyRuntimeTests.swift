import Foundation
import SessionLog
import Testing
import TrainingEngine

@testable import StationRuntime

/// Novelty recorded per trial and station, in virtual time: a sample is novel to the dog in a
/// trial when no earlier trial of that dog laid it out (docs/figures.md, "Exposure and novelty").
@Suite struct NoveltyRuntimeTests {
    static let second: UInt64 = 1_000_000_000

    /// Runs the rig's first `count` trials to a hit (or to the search timeout without a target).
    private func run(_ rig: Rig, trials count: Int) throws {
        for trial in 0..<count {
            #expect(rig.ready().answer == .started)
            rig.advance(by: Self.second)
            if let target = rig.layouts[trial].targetStation {
                rig.nose(at: target, true)
                rig.advance(by: 3 * Self.second)
                rig.nose(at: target, false)
            } else {
                rig.advance(by: rig.configuration.searchTimeout)
            }
            rig.advance(by: 30 * Self.second)
            try rig.drain()
        }
    }

    /// The target station's novelty in each logged trial of `session`, in order.
    private func targetNovelty(_ rig: Rig) throws -> [Bool?] {
        try rig.log.reader.trials().filter { $0.sessionId == rig.sessionId.uuidString.lowercased() }.sorted {
            $0.number < $1.number
        }
        .map { trial in trial.layout.first { $0.kind == .target }?.novel }
    }

    @Test func aSessionRecordsNoveltyAndTheNextSessionOnTheSameSamplesRecordsThemFamiliar() throws {
        // Phase 1, step 1: one target among four blanks; two target samples registered.
        let first = try Rig(phase: "phase-1", step: "1", trials: 3)
        try run(first, trials: 3)
        // Trials 1 and 2 meet each target for the first time (least met first); trial 3 repeats one.
        #expect(try targetNovelty(first) == [true, true, false])
        // Blanks hold no sample: no novelty recorded.
        let trial = try #require(try first.log.reader.trials().first)
        #expect(trial.layout.filter { $0.kind == .blank }.allSatisfy { $0.novel == nil })
        #expect(try first.log.reader.exposure(dog: first.dog.id.uuidString).values.sorted() == [1, 2])

        // The same dog, the same samples: every target is familiar now.
        let second = try Rig(phase: "phase-1", step: "1", trials: 2, seed: 8, log: first.log, dog: first.dog)
        try run(second, trials: 2)
        #expect(try targetNovelty(second) == [false, false])

        // Another dog has met none of them.
        let ada = DogRecord(name: "Ada")
        try first.log.append([ada])
        let other = try Rig(phase: "phase-1", step: "1", trials: 1, log: first.log, dog: ada)
        try run(other, trials: 1)
        #expect(try targetNovelty(other) == [true])
    }
}
