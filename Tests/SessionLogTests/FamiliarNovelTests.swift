import Figures
import Foundation
import ReadingRows
import Readings
import Report
import Testing
import TrainingEngine

@testable import SessionLog

/// A log built trial by trial for the familiar/novel and confound rules: each trial names its
/// samples and which of them the dog indicated; every station is visited.
final class LineupLogBuilder {
    let log: SessionLog
    private var time: Int64 = 1_000_000_000_000
    private var numbers: [UUID: Int] = [:]
    private var sessions: [UUID: SessionRecord] = [:]

    init() throws { log = try SessionLog(path: temporaryLogPath()) }

    func dog(_ name: String) throws -> DogRecord {
        let dog = DogRecord(name: name)
        let session = SessionRecord(dogId: dog.id, phase: "3 discrimination", step: "step 1", mode: .doubleBlind)
        try log.append([dog, session])
        sessions[dog.id] = session
        return dog
    }

    func sample(_ label: String, _ kind: SampleKind, source: String? = nil) throws -> SampleRecord {
        let sample = SampleRecord(label: label, kind: kind, facts: SampleFacts(source: source))
        try log.append([sample])
        return sample
    }

    /// The wall time of the next trial's start.
    var nextWallNs: Int64 { 1_740_819_600_000_000_000 + time + 10_000_000_000 }

    func trial(
        _ dog: DogRecord, _ samples: [SampleRecord], indicated: Set<UUID>, outcome: TrialOutcome? = nil
    ) throws {
        let session = sessions[dog.id]!
        func at(_ seconds: Int64) -> LogTime {
            time += seconds * 1_000_000_000
            return LogTime(monoNs: time, wallNs: 1_740_819_600_000_000_000 + time)
        }
        let layout = samples.enumerated().map { index, sample in
            let hit = indicated.contains(sample.id)
            return StationSlot(
                station: index + 1, sampleId: sample.id, kind: sample.kind,
                seen: StationSeen(
                    visited: true, indicated: hit, firstIndicationNs: hit ? 2_000_000_000 : nil, sniffs: hit ? 0 : 1,
                    dwellNs: 500_000_000))
        }
        let target = samples.firstIndex { $0.kind == .target }
        let falseAlert = samples.contains { $0.kind != .target && indicated.contains($0.id) }
        let found = target.map { indicated.contains(samples[$0].id) } ?? false
        let scored: TrialOutcome =
            falseAlert ? .falseAlert : target == nil ? .correctRejection : found ? .hit : .miss
        numbers[dog.id, default: 0] += 1
        let writer = log.makeWriter()
        defer { writer.close() }
        try writer.commitTrial(
            TrialRecord(
                sessionId: session.id, number: numbers[dog.id]!, layout: layout, outcome: outcome ?? scored,
                indicatedStation: nil, latencyNs: indicated.isEmpty ? nil : 2_000_000_000, started: at(10),
                ended: at(5)))
    }
}

@Suite struct FamiliarNovelTests {
    @Test func aDogPerfectOnFamiliarAndAtChanceOnNovelIsFlagged() throws {
        let b = try LineupLogBuilder()
        let memo = try b.dog("Memo")
        let steady = try b.dog("Steady")
        let familiar = try b.sample("T-old", .target)
        let controlOld = try b.sample("C-old", .control)
        // Memo: the old target 21 times, every one found (the first is novel: 20 familiar),
        // then 15 new targets, 5 found: 1/3, chance in a lineup of three.
        for _ in 0..<21 { try b.trial(memo, [familiar, controlOld], indicated: [familiar.id]) }
        for k in 0..<15 {
            let target = try b.sample("T-memo-\(k)", .target)
            let control = try b.sample("C-memo-\(k)", .control)
            try b.trial(memo, [target, control], indicated: k < 5 ? [target.id] : [control.id])
        }
        // Steady: 18 of 20 familiar, 9 of 10 novel targets found (no difference).
        for k in 0..<21 {
            try b.trial(steady, [familiar, controlOld], indicated: k == 3 || k == 7 ? [] : [familiar.id])
        }
        for k in 0..<10 {
            let target = try b.sample("T-steady-\(k)", .target)
            try b.trial(steady, [target, controlOld], indicated: k == 0 ? [] : [target.id])
        }
        let rows = try b.log.reader.familiarNovelStats()
        #expect(rows.map(\.dog) == ["Memo", "Steady"])
        let m = rows[0]
        #expect(m.familiarSensitivity.successes == 20 && m.familiarSensitivity.trials == 20)
        #expect(m.novelSensitivity.successes == 6 && m.novelSensitivity.trials == 16)
        // Controls: C-old familiar 20 times, passed each; the 15 new controls, 10 indicated;
        // C-old's first trial is novel and passed.
        #expect(m.familiarSpecificity.successes == 20 && m.familiarSpecificity.trials == 20)
        #expect(m.novelSpecificity.successes == 6 && m.novelSpecificity.trials == 16)
        // Fisher (20, 0; 6, 10), two-sided: scipy.stats.fisher_exact gives 3.1504e-05.
        #expect(abs(try #require(m.sensitivityP) - 3.1504e-05) < 1e-9)
        #expect(m.memorisation)
        let s = rows[1]
        // The first of 21 with the old target was novel and found: 18/20 familiar, 10/11 novel.
        #expect(s.familiarSensitivity.successes == 18 && s.familiarSensitivity.trials == 20)
        #expect(s.novelSensitivity.successes == 10 && s.novelSensitivity.trials == 11)
        #expect(!s.memorisation)
    }

    @Test func anAbortedTrialMakesItsSamplesFamiliarAndTheFilterDoesNot() throws {
        let b = try LineupLogBuilder()
        let dog = try b.dog("Rex")
        let target = try b.sample("T-1", .target)
        let control = try b.sample("C-1", .control)
        try b.trial(dog, [target, control], indicated: [], outcome: .aborted)
        let since = b.nextWallNs
        try b.trial(dog, [target, control], indicated: [target.id])
        for filter in [LogFilter(), LogFilter(since: since)] {
            let row = try #require(try b.log.reader.familiarNovelStats(filter).first)
            // The aborted trial is scored nowhere but met both samples: the hit is familiar.
            #expect(row.familiarSensitivity.trials == 1)
            #expect(row.novelSensitivity.trials == 0)
            #expect(row.familiarSpecificity.trials == 1)
        }
    }
}

@Suite struct ConfoundFlagTests {
    /// Twenty trials of one target and two controls. Targets: 16 from clinic A, 4 from clinic
    /// B; controls: 8 from A, 32 from B (the kinds' sources differ by 0.6). `follows` picks what
    /// the dog indicates.
    func block(_ b: LineupLogBuilder, _ dog: DogRecord, follows: (SampleRecord) -> Bool) throws {
        for k in 0..<20 {
            let target = try b.sample("T-\(dog.name)-\(k)", .target, source: k < 16 ? "clinic A" : "clinic B")
            let c1 = try b.sample("C1-\(dog.name)-\(k)", .control, source: k < 8 ? "clinic A" : "clinic B")
            let c2 = try b.sample("C2-\(dog.name)-\(k)", .control, source: "clinic B")
            let samples = [target, c1, c2]
            try b.trial(dog, samples, indicated: Set(samples.filter(follows).map(\.id)))
        }
    }

    @Test func aDogWhoseIndicationsFollowTheSourceIsFlaggedOneThatFollowsTheKindIsNot() throws {
        let b = try LineupLogBuilder()
        let bySource = try b.dog("Clinic")
        let byKind = try b.dog("Kind")
        try block(b, bySource) { $0.facts.source == "clinic A" }
        try block(b, byKind) { $0.kind == .target }
        let rows = try b.log.reader.confoundStats()
        // Only the source is recorded: no collection or processing rows.
        #expect(rows.map(\.dog) == ["Clinic", "Kind"])
        #expect(rows.allSatisfy { $0.detail == .source && $0.presentations == 60 })
        let s = rows[0]
        #expect(abs(try #require(s.kindDifference) - 0.6) < 1e-12)
        // Clinic indicates every A sample: 24 indicated, by source 60/60, by kind 16 + 32 = 48/60.
        #expect(s.accuracyByDetail == 1)
        #expect(s.accuracyByKind == 0.8)
        #expect(s.lambdaByDetail == 1)
        #expect(s.values.map(\.value) == ["clinic A", "clinic B"])
        #expect(s.values[0].indicated.successes == 24 && s.values[0].indicated.trials == 24)
        #expect(s.values[1].specificity.successes == 32 && s.values[1].specificity.trials == 32)
        #expect(s.flagged)
        let k = rows[1]
        // Kind indicates the 20 targets: by kind 60/60, by source (16 + 32) / 60.
        #expect(k.accuracyByKind == 1)
        #expect(k.accuracyByDetail == 0.8)
        #expect(!k.flagged)
    }

    /// With targets and controls from disjoint sources, source predicts whatever kind does:
    /// the flag says the design cannot tell them apart, for any dog that discriminates.
    @Test func disjointSourcesFlagEvenAKindFollower() throws {
        let b = try LineupLogBuilder()
        let dog = try b.dog("Rex")
        for k in 0..<10 {
            let target = try b.sample("T-\(k)", .target, source: "hospital")
            let control = try b.sample("C-\(k)", .control, source: "volunteers")
            try b.trial(dog, [target, control], indicated: [target.id])
        }
        let row = try #require(try b.log.reader.confoundStats().first)
        #expect(row.kindDifference == 1)
        #expect(row.flagged)
        // Too few presentations: the same design over 9 trials (18) does not speak.
        #expect(
            !ConfoundRule.flags(
                presentations: 18, kindDifference: 1, accuracyByKind: 1, accuracyByDetail: 1, lambdaByDetail: 1))
    }

    /// A dog at chance: nothing separates its indications, whatever the sources.
    @Test func aDogAtChanceIsNotFlagged() throws {
        let b = try LineupLogBuilder()
        let dog = try b.dog("Rex")
        for k in 0..<12 {
            let target = try b.sample("T-\(k)", .target, source: "hospital")
            let control = try b.sample("C-\(k)", .control, source: "volunteers")
            // Alternately the target and the control: half of each indicated.
            try b.trial(dog, [target, control], indicated: [k % 2 == 0 ? target.id : control.id])
        }
        let row = try #require(try b.log.reader.confoundStats().first)
        #expect(row.kindDifference == 1)
        #expect(row.lambdaByDetail == 0)
        #expect(!row.flagged)
    }
}

@Suite struct ReportSampleFiguresTests {
    /// The report's dog sections show the same rows as `stats`, and each flag once, in the
    /// flagged dog's section only.
    @Test func theReportShowsFamiliarNovelAndSourceFiguresWithTheirFlags() throws {
        let b = try LineupLogBuilder()
        let memo = try b.dog("Memo")
        let steady = try b.dog("Steady")
        let old = try b.sample("T-old", .target, source: "clinic A")
        for _ in 0..<21 {
            try b.trial(memo, [old], indicated: [old.id])
            try b.trial(steady, [old], indicated: [old.id])
        }
        for k in 0..<15 {
            let memoTarget = try b.sample("T-memo-\(k)", .target, source: "clinic A")
            try b.trial(memo, [memoTarget], indicated: k < 5 ? [memoTarget.id] : [])
            let steadyTarget = try b.sample("T-steady-\(k)", .target, source: "clinic A")
            try b.trial(steady, [steadyTarget], indicated: [steadyTarget.id])
        }
        let clinic = try b.dog("Clinic")
        try ConfoundFlagTests().block(b, clinic) { $0.facts.source == "clinic A" }
        let data = try b.log.reader.report()
        let html = ReportHTML.render(data, scope: "all")
        func section(_ name: String) throws -> Substring {
            let start = try #require(html.range(of: "data-name=\"\(name)\""))
            let rest = html[start.upperBound...]
            return rest[..<(rest.range(of: "</section>")?.lowerBound ?? rest.endIndex)]
        }
        let m = try section("Memo")
        let s = try section("Steady")
        #expect(m.contains("data-novel-sensitivity-successes=\"6\" data-novel-sensitivity-trials=\"16\""))
        #expect(m.contains("class=\"flag memorisation\""))
        #expect(!s.contains("class=\"flag memorisation\""))
        #expect(s.contains("data-novel-sensitivity-successes=\"16\" data-novel-sensitivity-trials=\"16\""))
        // Memo's samples all from one clinic: its row is shown, and no confound flag (no controls).
        #expect(m.contains("data-detail=\"source\" data-value=\"clinic A\""))
        #expect(!m.contains("class=\"flag confound\""))
        #expect(try section("Clinic").contains("class=\"flag confound\" data-detail=\"source\""))
    }
}
