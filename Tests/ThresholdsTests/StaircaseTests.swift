import Foundation
import Testing
import TrainingEngine

@testable import Thresholds

/// The ladder, the n-down-1-up staircase and constant stimuli, on hand-built answers.
@Suite struct StaircaseTests {
    /// A half-log ladder, 1e-9 up to 10^-5.5: eight rungs.
    static let ladder = try! DilutionLadder(weakest: 1e-9, rungs: 8, stepsPerDecade: 2)

    @Test func aHalfLogLadderStepsBySquareRootOfTen() throws {
        let l = Self.ladder
        #expect(l.count == 8)
        for (i, c) in l.concentrations.enumerated() {
            #expect(abs(l.log10Concentrations[i] - (-9 + Double(i) / 2)) < 1e-12, "rung \(i): \(c)")
        }
    }

    @Test func aBadLadderIsNamed() {
        #expect(throws: ThresholdError.ladder("needs at least 2 dilutions, has 1")) {
            try DilutionLadder(concentrations: [1e-3])
        }
        #expect(throws: ThresholdError.ladder("rung 1 has concentration 0.0; each must be a positive number")) {
            try DilutionLadder(concentrations: [1e-3, 0])
        }
        do {
            _ = try DilutionLadder(concentrations: [1e-3, 1e-4])
            Issue.record("a ladder strongest first was taken")
        } catch {
            #expect(
                "\(error)"
                    == "dilution ladder: rung 1 (0.0001) is not stronger than rung 0 (0.001); list the dilutions "
                    + "weakest first, each stronger than the last")
        }
    }

    /// 2-down-1-up from rung 5, stopping at 4 reversals, worked by hand:
    /// 5 ✓✓ → 4 ✓✓ → 3 ✓✗ (reversal at 3) → 4 ✗ → 5 ✓✓ (reversal at 5) → 4 ✓✓ → 3 ✗ (reversal
    /// at 3) → 4 ✓✓ (reversal at 4): stopped after 14 trials.
    static let answers: [(Int, Bool)] = [
        (5, true), (5, true), (4, true), (4, true), (3, true), (3, false), (4, false), (5, true), (5, true),
        (4, true), (4, true), (3, false), (4, true), (4, true),
    ]

    @Test func twoDownOneUpByHand() throws {
        let rules = StaircaseRules(down: 2, startRung: 5, stopAfterReversals: 4)
        var s = try Staircase(rules: rules, ladder: Self.ladder)
        var random = SeededGenerator(seed: 1)
        for (i, (rung, found)) in Self.answers.enumerated() {
            #expect(!s.hasStopped, "stopped early at trial \(i)")
            let next = s.next(using: &random)
            #expect(next == .target(rung: rung), "trial \(i)")
            try s.record(.target(rung: rung, found: found))
        }
        #expect(s.hasStopped)
        let after = s.next(using: &random)
        #expect(after == .stopped)
        #expect(s.reversals.map(\.rung) == [3, 5, 3, 4])
        #expect(s.reversals.map(\.trial) == [5, 8, 11, 13])
        #expect(s.reversals.map(\.wasGoingDown) == [true, false, true, false])
        // Last 3 reversals at rungs 5, 3, 4: their geometric mean is rung 4's concentration.
        #expect(abs(log10(try s.reversalEstimate(last: 3)) - (-7)) < 1e-12)
        // Last 4: rungs 3, 5, 3, 4, mean rung 3.75, so 10^(-9 + 3.75/2).
        #expect(abs(log10(try s.reversalEstimate(last: 4)) - (-9 + 3.75 / 2)) < 1e-12)
        #expect(
            throws: ThresholdError.data("the reversal estimate over the last 5 reversals needs 5, the staircase has 4")
        ) {
            try s.reversalEstimate(last: 5)
        }
        #expect(throws: ThresholdError.self) { try s.record(.target(rung: 3, found: true)) }
        // The tallies, weakest first: rung 3 (3 trials, 1 found), rung 4 (7, 6), rung 5 (4, 4).
        let t = s.tallies
        #expect(t.map(\.trials) == [3, 7, 4])
        #expect(t.map(\.found) == [1, 6, 4])
        // Replayed from its answers it is the same staircase.
        let replayed = try Staircase(
            rules: rules, ladder: Self.ladder, answers: Self.answers.map { .target(rung: $0.0, found: $0.1) })
        #expect(replayed == s)
    }

    @Test func threeDownOneUpNeedsThreeInARow() throws {
        var s = try Staircase(
            rules: StaircaseRules(down: 3, step: 2, startRung: 7, stopAfterTrials: 10), ladder: Self.ladder)
        for _ in 0..<2 { try s.record(.target(rung: 7, found: true)) }
        #expect(s.rung == 7)
        try s.record(.target(rung: 7, found: true))
        #expect(s.rung == 5)  // step of 2 rungs
        try s.record(.target(rung: 5, found: true))
        try s.record(.target(rung: 5, found: false))  // the run starts again after a miss
        #expect(s.rung == 7 && s.reversals.map(\.rung) == [5])
        #expect(throws: ThresholdError.answer("trial 6 was at rung 5, but the staircase asked for rung 7")) {
            try s.record(.target(rung: 5, found: true))
        }
    }

    /// A blocked step at the ladder's end keeps its direction: finds at the weakest rung and then
    /// a miss is a reversal there.
    @Test func theLaddersEndsHoldTheStaircase() throws {
        var s = try Staircase(rules: StaircaseRules(down: 2, startRung: 0, stopAfterTrials: 20), ladder: Self.ladder)
        for _ in 0..<4 { try s.record(.target(rung: 0, found: true)) }
        #expect(s.rung == 0 && s.reversals.isEmpty)
        try s.record(.target(rung: 0, found: false))
        #expect(s.rung == 1 && s.reversals.map(\.rung) == [0])
    }

    @Test func catchTrialsComeAtTheirRateAndDoNotMoveTheStaircase() throws {
        let rules = StaircaseRules(down: 2, startRung: 4, stopAfterTrials: 100_000, catchTrialRate: 0.2)
        var s = try Staircase(rules: rules, ladder: Self.ladder)
        var random = SeededGenerator(seed: 38)
        var catches = 0
        for _ in 0..<10_000 where s.next(using: &random) == .catchTrial { catches += 1 }
        // 2,000 expected; ±4 standard deviations (40).
        #expect(abs(catches - 2000) < 160, "\(catches)")
        try s.record(.catchTrial(indicated: true))
        try s.record(.catchTrial(indicated: false))
        #expect(s.rung == 4 && s.trials.count == 2 && s.targetTrials == 0 && s.tallies.isEmpty)
        // No rate, no draw: the caller's generator is untouched.
        let none = try Staircase(rules: StaircaseRules(down: 2, startRung: 4, stopAfterTrials: 9), ladder: Self.ladder)
        var a = SeededGenerator(seed: 5)
        let b = a
        let next = none.next(using: &a)
        #expect(next == .target(rung: 4) && a == b)
    }

    @Test func stopAfterTrialsCountsCatchTrials() throws {
        var s = try Staircase(
            rules: StaircaseRules(down: 2, startRung: 4, stopAfterTrials: 3, catchTrialRate: 0.5), ladder: Self.ladder)
        try s.record(.catchTrial(indicated: false))
        try s.record(.target(rung: 4, found: true))
        #expect(!s.hasStopped)
        try s.record(.catchTrial(indicated: false))
        #expect(s.hasStopped)
    }

    @Test func badRulesAreNamed() {
        let cases: [(StaircaseRules, String)] = [
            (StaircaseRules(down: 0, startRung: 1, stopAfterTrials: 5), "down must be at least 1"),
            (StaircaseRules(down: 2, step: 0, startRung: 1, stopAfterTrials: 5), "the step must be at least 1 rung"),
            (
                StaircaseRules(down: 2, startRung: 8, stopAfterTrials: 5),
                "the start rung 8 is not on the ladder (rungs 0 to 7)"
            ),
            (StaircaseRules(down: 2, startRung: 1), "a staircase needs a stop rule"),
            (StaircaseRules(down: 2, startRung: 1, stopAfterReversals: 0), "stop after reversals must be at least 1"),
            (StaircaseRules(down: 2, startRung: 1, stopAfterTrials: 5, catchTrialRate: 1), "the catch-trial rate"),
        ]
        for (rules, message) in cases {
            do {
                _ = try Staircase(rules: rules, ladder: Self.ladder)
                Issue.record("accepted \(rules)")
            } catch {
                #expect("\(error)".hasPrefix("procedure: \(message)"), "\(error)")
            }
        }
    }

    @Test func constantStimuliAreBalancedInBlocksAndSeeded() throws {
        let mcs = try ConstantStimuli(ladder: Self.ladder, rungs: [1, 3, 5, 7], blocks: 6, catchTrialsPerBlock: 1)
        var r1 = SeededGenerator(seed: 7)
        var r2 = SeededGenerator(seed: 7)
        var r3 = SeededGenerator(seed: 8)
        let order = mcs.order(using: &r1)
        #expect(order.count == 30)
        #expect(order == mcs.order(using: &r2))
        #expect(order != mcs.order(using: &r3))
        for block in stride(from: 0, to: 30, by: 5) {
            let here = Array(order[block..<block + 5])
            #expect(Set(here) == [.target(rung: 1), .target(rung: 3), .target(rung: 5), .target(rung: 7), .catchTrial])
        }
        #expect(throws: ThresholdError.rules("rung 8 is not on the ladder (rungs 0 to 7)")) {
            try ConstantStimuli(ladder: Self.ladder, rungs: [1, 8], blocks: 2)
        }
        #expect(throws: ThresholdError.rules("the rungs [1, 1] name a rung twice")) {
            try ConstantStimuli(ladder: Self.ladder, rungs: [1, 1], blocks: 2)
        }
    }
}
