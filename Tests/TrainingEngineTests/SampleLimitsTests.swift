import PropertyBased
import Testing

@testable import TrainingEngine

/// Usage limits (overall and per dog), rotation by the dog's exposure, and novel-target rounds.
@Suite struct SampleLimitsTests {
    @Test func limitsOverallAndPerDogAreNeverExceeded() {
        forAll(count: 200, zip(Gen.int(in: 1...40), Gen.uint64(), Gen.int(in: 1...6), Gen.int(in: 1...6))) {
            count, seed, overall, perDog in
            let samples =
                (0..<6).map { Sample(id: "C\($0)", kind: .control, usageLimit: overall, usageCount: $0 % 3) }
                + (0..<4).map {
                    Sample(id: "T\($0)", kind: .target, usageLimitPerDog: perDog, dogUsageCount: $0 % 2)
                }
            let setup = LineupSetup(stations: 3, targets: 1, controls: 2)
            var generator = LayoutGenerator(setup: setup, samples: samples, seed: seed)
            guard let layouts = try? generator.block(count: count) else {
                // A refusal is allowed; what it must never do is go beyond a limit.
                return
            }
            for sample in samples {
                let used = layouts.filter { $0.stations.contains { $0.sampleID == sample.id } }.count
                if let limit = sample.usageLimit { #expect(used <= max(0, limit - sample.usageCount)) }
                if let limit = sample.usageLimitPerDog { #expect(used <= max(0, limit - sample.dogUsageCount)) }
            }
        }
    }

    @Test func theStepsLimitStandsForSamplesWithoutTheirOwn() throws {
        var setup = LineupSetup(stations: 2, targets: 1, controls: 1)
        setup.maxUsesPerDog = 2
        let samples = [
            Sample(id: "T1", kind: .target, dogUsageCount: 1), Sample(id: "T2", kind: .target, dogUsageCount: 2),
            Sample(id: "C1", kind: .control, usageLimitPerDog: 10), Sample(id: "C2", kind: .control),
        ]
        var generator = LayoutGenerator(setup: setup, samples: samples, seed: 4)
        // T2 is at the step's limit (2 for this dog): only T1 may go, and only once more.
        let first = try generator.block(count: 1)
        #expect(first[0].stations.first { $0.kind == .target }?.sampleID == "T1")
        #expect(throws: LayoutError.self) { try generator.block(count: 1) }
    }

    @Test func aStartStoppedByLimitsNamesTheSamplesAndTheirLimits() {
        let samples = [
            Sample(id: "a", kind: .target, usageLimit: 3, usageCount: 3, label: "T-17"),
            Sample(id: "b", kind: .target, usageLimitPerDog: 2, dogUsageCount: 2, label: "T-18"),
        ]
        var generator = LayoutGenerator(
            setup: LineupSetup(stations: 2, targets: 1, blanks: 1), samples: samples, seed: 1)
        do {
            _ = try generator.block(count: 1)
            Issue.record("laid out beyond the limits")
        } catch {
            #expect(
                error
                    == .usageLimitsReached(
                        kind: .target, trialIndex: 0, needed: 1, available: 0,
                        stopped: [
                            "T-17: used 3 times, max_uses 3", "T-18: met 2 times by this dog, max_uses_per_dog 2",
                        ]))
            #expect(error.description.contains("T-17: used 3 times, max_uses 3"))
        }
    }

    @Test func theSampleThisDogHasMetLeastGoesFirst() throws {
        // C1 is the least used overall, but this dog has met it most: C2 (never met) goes first,
        // then C3 (met once), then C1.
        let samples = [
            Sample(id: "T", kind: .target),
            Sample(id: "C1", kind: .control, usageCount: 0, dogUsageCount: 2),
            Sample(id: "C2", kind: .control, usageCount: 9, dogUsageCount: 0),
            Sample(id: "C3", kind: .control, usageCount: 5, dogUsageCount: 1),
        ]
        var generator = LayoutGenerator(
            setup: LineupSetup(stations: 2, targets: 1, controls: 1), samples: samples, seed: 7)
        let controls = try (0..<3).map {
            try generator.layout(trialIndex: $0, kinds: [.target, .control]).stations[1].sampleID
        }
        #expect(controls == ["C2", "C3", "C2"])
        let novel = try generator.layout(trialIndex: 3, kinds: [.target, .control]).stations.map(\.novel)
        #expect(novel == [false, false])
    }

    @Test func theNovelTargetShareIsMetExactly() throws {
        for seed: UInt64 in [1, 2, 3, 42, 99] {
            var setup = LineupSetup(stations: 3, targets: 1, controls: 2, noTargetShare: 0.2)
            setup.novelTargetShare = 0.2
            let samples =
                (0..<4).map { Sample(id: "F\($0)", kind: .target, dogUsageCount: 3) }
                + (0..<10).map { Sample(id: "N\($0)", kind: .target) }
                + (0..<4).map { Sample(id: "C\($0)", kind: .control, dogUsageCount: 1) }
            var generator = LayoutGenerator(setup: setup, samples: samples, seed: seed)
            let layouts = try generator.block(count: 20)
            // 16 trials with a target; 0.2 of them is 3.2, rounded to 3.
            let targets = layouts.compactMap { l in l.stations.first { $0.kind == .target } }
            #expect(targets.count == 16)
            #expect(targets.filter { $0.novel == true }.count == 3)
            // The others are familiar: a novel sample once met counts as met (least met first).
            #expect(targets.filter { $0.novel == false }.count == 13)
            #expect(generator.novelTargetTrials.count == 3)
        }
    }

    @Test func aNovelOnlySessionUsesOnlySamplesTheDogNeverMet() throws {
        var setup = LineupSetup(stations: 2, targets: 1, controls: 1)
        setup.novelOnly = true
        let samples =
            [Sample(id: "old", kind: .target, dogUsageCount: 1), Sample(id: "oldC", kind: .control, dogUsageCount: 4)]
            + (0..<3).map { Sample(id: "T\($0)", kind: .target) } + (0..<3).map { Sample(id: "C\($0)", kind: .control) }
        var generator = LayoutGenerator(setup: setup, samples: samples, seed: 5)
        let layouts = try generator.block(count: 3)
        #expect(layouts.allSatisfy { $0.stations.allSatisfy { $0.novel == true } })
        // A fourth trial has no novel target left: refused, naming what the dog has met.
        #expect(
            throws: LayoutError.novelSamplesExhausted(
                kind: .target, trialIndex: 0, needed: 1, available: 0, met: ["T0", "T1", "T2", "old"])
        ) { try generator.block(count: 1) }
    }
}
