import Foundation
import GRDB
import Readings
import Testing
import TrainingEngine

@testable import SessionLog

/// Issue 38's dilutions: a dilution is a sample of its own, tied to the sample it was made from,
/// added one at a time or as a ladder, all or nothing; its uses are its own; a merge keeps its
/// stock when the stock is matched by label to another id.
@Suite struct DilutionTests {
    func logWithStock() throws -> SessionLog {
        let log = try SessionLog(path: temporaryLogPath())
        try log.append([SampleRecord(label: "T-1", kind: .target, facts: SampleFacts(source: "clinic A"))])
        return log
    }

    @Test func aLadderIsOneSampleADilutionEachStepFactorTimesWeaker() throws {
        let log = try logWithStock()
        let rungs = try DilutionLadder.rungs(stock: "T-1", factor: 10, steps: 8)
        #expect(rungs.map(\.label) == (1...8).map { "T-1/1e\($0)" })
        let added = try log.addDilutions(
            of: "T-1", rungs,
            made: DilutionMaking(diluent: "mineral oil", madeOn: "2026-11-20", madeBy: "R7", maxUses: 40))
        #expect(added.count == 8 && added.allSatisfy { $0.kind == .target && $0.maxUses == 40 })
        let samples = try log.reader.samples()
        #expect(samples.count == 9)
        let third = try #require(samples.first { $0.label == "T-1/1e3" })
        let stock = try #require(samples.first { $0.label == "T-1" })
        #expect(stock.dilution == nil)
        #expect(third.dilution?.stock == "T-1" && third.dilution?.stockId == stock.id)
        #expect(third.dilution?.factor == 1000 && third.dilution?.diluent == "mineral oil")
        #expect(third.dilution?.madeOn == "2026-11-20" && third.dilution?.madeBy == "R7")
        #expect(third.maxUses == 40)
    }

    @Test func stepsThatAreNotDecadesAreNamedByTheirFactorOrTheirDecades() throws {
        #expect(try DilutionLadder.rungs(stock: "S", factor: 2, steps: 3).map(\.label) == ["S/2", "S/4", "S/8"])
        #expect(
            try DilutionLadder.rungs(stock: "S", factor: 3.1623, steps: 3).map(\.label) == [
                "S/1e0.5", "S/1e1", "S/1e1.5",
            ])
    }

    @Test func aDilutionOfADilutionAndAConcentrationAreKept() throws {
        let log = try logWithStock()
        _ = try log.addDilutions(of: "T-1", [DilutionRung(label: "T-1/1e2", factor: 100)], made: DilutionMaking())
        let made = try log.addDilutions(
            of: "T-1/1e2", [DilutionRung(label: "T-1/ppb", concentration: 2.5, unit: "ppb")],
            made: DilutionMaking(kind: .distractor))
        #expect(made.first?.kind == .distractor)
        let details = try log.reader.sample(id: made[0].id.logText)
        #expect(details.sample.dilution?.stock == "T-1/1e2")
        #expect(details.sample.dilution?.factor == nil && details.sample.dilution?.concentration == 2.5)
        #expect(details.sample.dilution?.concentrationUnit == "ppb")
    }

    @Test func aRefusedLadderWritesNothing() throws {
        let log = try logWithStock()
        _ = try log.addDilutions(of: "T-1", [DilutionRung(label: "T-1/1e3", factor: 1000)], made: DilutionMaking())
        // Its third label is taken: the first two are not written either.
        #expect(throws: SessionLogError.duplicateSample(label: "T-1/1e3")) {
            try log.addDilutions(
                of: "T-1", try DilutionLadder.rungs(stock: "T-1", factor: 10, steps: 5), made: DilutionMaking())
        }
        #expect(throws: SessionLogError.unknownSample("T-9")) {
            try log.addDilutions(of: "T-9", [DilutionRung(label: "T-9/1e1", factor: 10)], made: DilutionMaking())
        }
        for bad in [
            DilutionRung(label: "x", factor: 1), DilutionRung(label: "x", factor: .infinity),
            DilutionRung(label: "x", concentration: 0, unit: "ppb"), DilutionRung(label: "x", concentration: 1),
            DilutionRung(label: "x", unit: "ppb"), DilutionRung(label: "x"),
        ] {
            #expect(throws: SessionLogError.self) { try log.addDilutions(of: "T-1", [bad], made: DilutionMaking()) }
        }
        #expect(throws: SessionLogError.self) {
            try log.addDilutions(of: "T-1", [DilutionRung(label: "y", factor: 10)], made: DilutionMaking(madeBy: "A B"))
        }
        #expect(try log.reader.samples().map(\.label) == ["T-1", "T-1/1e3"])
    }

    /// Each dilution's uses are its own: a trial with one rung counts for that rung only, so
    /// `max_uses` and each dog's exposure (both counted per sample) hold per dilution.
    @Test func aDilutionsUsesAreItsOwn() throws {
        let log = try logWithStock()
        let rungs = try log.addDilutions(
            of: "T-1", try DilutionLadder.rungs(stock: "T-1", factor: 10, steps: 2), made: DilutionMaking())
        let dog = DogRecord(name: "Aino")
        let session = SessionRecord(dogId: dog.id, mode: .automated)
        let trial = TrialRecord(
            sessionId: session.id, number: 1,
            layout: [StationSlot(station: 1, sampleId: rungs[1].id, kind: .target)], outcome: .hit,
            indicatedStation: 1, started: .now(), ended: .now())
        try log.append([dog, session, trial])
        let uses = Dictionary(uniqueKeysWithValues: try log.reader.samples().map { ($0.label, $0.uses) })
        #expect(uses == ["T-1": 0, "T-1/1e1": 0, "T-1/1e2": 1])
        let details = try log.reader.sample(id: rungs[1].id.logText)
        #expect(details.usedBy.map(\.dog) == ["Aino"] && details.usedBy.first?.uses == 1)
        // `stats --by sample` groups by sample, so each dilution is a row of its own.
        let bySample = try log.reader.stats(by: .sample)
        #expect(bySample.map(\.group) == ["T-1/1e2"] && bySample.first?.results.hits == 1)
    }

    /// The lab's log already holds T-1 under another id: the merged dilution names that one.
    @Test func aMergeKeepsADilutionsStockWhenTheStockIsMatchedByLabel() throws {
        let lab = try SessionLog(path: temporaryLogPath())
        try lab.append([SampleRecord(label: "T-1", kind: .target)])
        let station = try logWithStock()
        _ = try station.addDilutions(of: "T-1", [DilutionRung(label: "T-1/1e1", factor: 10)], made: DilutionMaking())
        _ = try lab.merge(from: station.path)
        let samples = try lab.reader.samples()
        let stock = try #require(samples.first { $0.label == "T-1" })
        let rung = try #require(samples.first { $0.label == "T-1/1e1" })
        #expect(rung.dilution?.stockId == stock.id && rung.dilution?.stock == "T-1")
    }
}
