import Figures
import Testing
import TrainingEngine

@testable import VirtualDog

/// The memorising switch: higher sensitivity at targets the dog has met often, the same dog
/// otherwise.
@Suite struct MemorisingDogTests {
    /// Hit rates on trials whose target was familiar and on those whose target was novel.
    func hitRates(memorising: Memorising?, seed: UInt64) throws -> (familiar: Double, novel: Double, novelTrials: Int) {
        var dog = DogParameters(sensitivity: 0.5, falseAlertRate: 0)
        dog.memorising = memorising
        var settings = BlockSimulation.Settings.fiveStation(trials: 200, seed: seed, dog: dog)
        settings.lineup.novelTargetShare = 0.3
        // Two targets the dog meets again and again, and a new one for each novel trial.
        settings.samples =
            [Sample(id: "F1", kind: .target, dogUsageCount: 5), Sample(id: "F2", kind: .target, dogUsageCount: 5)]
            + (0..<60).map { Sample(id: "N\($0)", kind: .target) }
            + (0..<8).map { Sample(id: "C\($0)", kind: .control) }
        let result = try BlockSimulation(settings: settings).run()
        var hits: [Bool: (Int, Int)] = [:]
        for (layout, trial) in zip(result.layouts, result.trials) {
            guard let target = layout.stations.first(where: { $0.kind == .target }), let novel = target.novel else {
                continue
            }
            let (h, n) = hits[novel] ?? (0, 0)
            hits[novel] = (h + (trial.outcome == .hit ? 1 : 0), n + 1)
        }
        let familiar = hits[false] ?? (0, 1)
        let novel = hits[true] ?? (0, 1)
        return (Double(familiar.0) / Double(familiar.1), Double(novel.0) / Double(novel.1), novel.1)
    }

    @Test func aMemorisingDogFindsFamiliarTargetsFarMoreSurely() throws {
        // Met once is familiar, as the log counts it: every familiar target is held at 0.98.
        let on = try hitRates(memorising: Memorising(after: 1, familiarSensitivity: 0.98), seed: 11)
        #expect(on.novelTrials == 60)
        #expect(on.familiar > 0.93)
        #expect(on.novel < 0.65)
        let off = try hitRates(memorising: nil, seed: 11)
        #expect(off.familiar < 0.65 && off.novel < 0.65)
        #expect(abs(off.familiar - off.novel) < 0.2)
    }

    @Test func theDogRemembersWhatStoodInTheLineup() {
        var dog = VirtualDog(
            parameters: {
                var p = DogParameters(sensitivity: 0, falseAlertRate: 0)
                p.memorising = Memorising(after: 2, familiarSensitivity: 1)
                return p
            }(), seed: 3)
        let layout = [StationContent(kind: .target, sampleID: "T"), StationContent(kind: .control, sampleID: "C")]
        var edges: [RawEdge] = []
        // Met 0 and 1 times before: sensitivity 0, it never holds (holds last 3 s, sniffs at most 1.2 s).
        for _ in 0..<2 { dog.search(layout: layout, startAt: 0, into: &edges) }
        #expect(dog.met == ["T": 2, "C": 2])
        edges.removeAll()
        dog.search(layout: layout, startAt: 0, into: &edges)
        // Met twice: familiar, sensitivity 1: it holds at the target (station 0) for 3 s.
        let arrive = edges.first { $0.station == 0 && $0.present }?.at
        let leave = edges.first { $0.station == 0 && !$0.present }?.at
        #expect(arrive != nil && leave != nil && leave! - arrive! == 3_000_000_000)
    }
}
