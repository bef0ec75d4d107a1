import Figures
import PropertyBased
import Testing
import TrainingEngine

@testable import VirtualDog

/// PropertyBased's generators drawn from a pinned seed (see TrainingEngineTests' helper for why).
func forAll<Value>(
    count: Int = 100, seed: UInt64 = 0xD06, _ generator: Generator<Value, some Sequence>,
    _ body: (Value) throws -> Void
) rethrows {
    var rng = Xoshiro(seed: (seed, 0x9E37_79B9_7F4A_7C15, 0xD1B5_4A32_D192_ED03, 0x0123_4567_89AB_CDEF))
    for _ in 0..<count { try body(generator.run(using: &rng)) }
}

let ms: Nanoseconds = 1_000_000

@Suite struct DebouncerTests {
    @Test func chatterCollapsesToOneEdgeEachWay() {
        var d = LeadingEdgeDebouncer(stations: 2, window: 5 * ms)
        let raw = [
            RawEdge(station: 0, present: true, at: 100 * ms),
            RawEdge(station: 0, present: false, at: 100 * ms + 500_000),
            RawEdge(station: 0, present: true, at: 101 * ms),
            RawEdge(station: 1, present: true, at: 101 * ms + 1),  // another line is independent
            RawEdge(station: 0, present: false, at: 400 * ms),
            RawEdge(station: 0, present: true, at: 401 * ms),
            RawEdge(station: 0, present: false, at: 402 * ms),
        ]
        let passed = raw.filter { d.accept($0) }
        #expect(
            passed == [
                RawEdge(station: 0, present: true, at: 100 * ms), RawEdge(station: 1, present: true, at: 101 * ms + 1),
                RawEdge(station: 0, present: false, at: 400 * ms),
            ])
    }

    @Test func edgeAtExactlyTheWindowPasses() {
        var d = LeadingEdgeDebouncer(stations: 1, window: 5 * ms)
        let passed = [
            RawEdge(station: 0, present: true, at: 0), RawEdge(station: 0, present: false, at: 5 * ms - 1),
            RawEdge(station: 0, present: false, at: 5 * ms),
            RawEdge(station: 3, present: true, at: 6 * ms),  // no such line
        ].map { d.accept($0) }
        #expect(passed == [true, false, true, false])
    }
}

@Suite struct VirtualDogTests {
    @Test func edgesAlternateAndAreOrderedPerStation() {
        forAll(zip(Gen.uint64(), Gen.int(in: 0...4), Gen.int(in: 1...6))) { seed, toggles, stations in
            var kinds = Array(repeating: SampleKind.control, count: stations)
            kinds[Int(seed % UInt64(stations))] = .target
            var dog = VirtualDog(
                parameters: DogParameters(
                    sensitivity: 0.5, falseAlertRate: 0.3, chatterToggles: toggles, holdBreakChance: 0.5),
                seed: seed)
            var edges: [RawEdge] = []
            let end = dog.search(kinds: kinds, startAt: 1_000, into: &edges)
            #expect(zip(edges, edges.dropFirst()).allSatisfy { $0.at <= $1.at })
            #expect(edges.allSatisfy { $0.at >= 1_000 && $0.at <= end })
            // On each line levels alternate, starting present and ending absent.
            for s in 0..<stations {
                let line = edges.filter { $0.station == s }.map(\.present)
                if line.isEmpty { continue }
                #expect(line.first == true && line.last == false)
                #expect(zip(line, line.dropFirst()).allSatisfy { $0 != $1 })
            }
        }
    }

    @Test func sameSeedSameSearch() {
        var a = VirtualDog(parameters: DogParameters(chatterToggles: 2), seed: 9)
        var b = VirtualDog(parameters: DogParameters(chatterToggles: 2), seed: 9)
        var ea: [RawEdge] = []
        var eb: [RawEdge] = []
        for _ in 0..<20 {
            a.search(kinds: [.control, .target, .control], startAt: 0, into: &ea)
            b.search(kinds: [.control, .target, .control], startAt: 0, into: &eb)
        }
        #expect(ea == eb && !ea.isEmpty)
    }

    @Test func perfectDogHitsEveryTrialThroughChatterAndBreaks() throws {
        var settings = BlockSimulation.Settings.fiveStation(
            trials: 200, seed: 3,
            dog: DogParameters(sensitivity: 1, falseAlertRate: 0, chatterToggles: 4, holdBreakChance: 1))
        settings.lineup.noTargetShare = 0.1
        let result = try BlockSimulation(settings: settings).run()
        let f = result.scoreboard.overall.figures
        #expect(f.results.hits == 180)
        #expect(f.results.correctRejections == 20)
        #expect(result.clicks == 180)
        #expect(result.rawEdges > result.debouncedEdges)  // chatter was there and was removed
        #expect(f.presentations.falseAlerts == 0)
    }

    @Test func blockIsReproducibleFromItsSeed() throws {
        let settings = BlockSimulation.Settings.fiveStation(
            trials: 100, seed: 77, dog: DogParameters(chatterToggles: 2))
        let a = try BlockSimulation(settings: settings).run()
        let b = try BlockSimulation(settings: settings).run()
        #expect(a.scoreboard == b.scoreboard && a.layouts == b.layouts && a.endedAt == b.endedAt)
        #expect(a.layouts.allSatisfy { $0.blockSeed == 77 })
    }

    /// Over 2,000 simulated trials, a dog with sensitivity 0.71 and a false-alert rate of 0.07 per
    /// control is measured within the 95 % intervals of the station-level counts.
    @Test func measuredSensitivityAndSpecificityMatchTheDog() throws {
        let settings = BlockSimulation.Settings.fiveStation(
            trials: 2000, seed: 2012,
            dog: DogParameters(sensitivity: 0.71, falseAlertRate: 0.07, chatterToggles: 2, holdBreakChance: 0.2))
        let result = try BlockSimulation(settings: settings).run()
        let figures = result.scoreboard.overall.figures
        let sensitivity = figures.sensitivity
        let specificity = figures.specificity
        #expect(sensitivity.trials == 2000)
        #expect((sensitivity.lower ?? 1) <= 0.71 && 0.71 <= (sensitivity.upper ?? 0), "\(sensitivity)")
        #expect((specificity.lower ?? 1) <= 0.93 && 0.93 <= (specificity.upper ?? 0), "\(specificity)")
        #expect(specificity.trials > 4000)
        // The intervals are tight enough to tell a different dog apart.
        #expect((sensitivity.upper ?? 1) - (sensitivity.lower ?? 0) < 0.05)
    }
}
