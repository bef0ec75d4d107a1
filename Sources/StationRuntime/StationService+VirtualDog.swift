import Foundation
import Glibc
import Logging
import SessionLog
import StationConfig
import StationControl
import StationIO
import Synchronization
import TrainingEngine
import VirtualDog

// The simulated station's virtual dog (and virtual trainer).
extension StationService {
    // MARK: The simulated station's virtual dog

    /// Searches each trial of the running session as it starts, edge by edge in real time. In
    /// a trainer-led exercise it searches each repetition, and a virtual trainer presses the
    /// clicker when the dog holds at the target and the error button when it holds elsewhere.
    func runDog() {
        guard let parameters = options.dog, let lineup = simulated else { return }
        var dog = VirtualDog(parameters: parameters, seed: options.dogSeed)
        // A memorising dog remembers what the log says the virtual dog has met.
        if parameters.memorising != nil, let known = try? log.reader.dogs().first(where: { $0.name == "virtual dog" }) {
            dog.met = (try? log.reader.exposure(dog: known.id)) ?? [:]
        }
        var edges: [RawEdge] = []
        var lastSearched: (ObjectIdentifier?, Int) = (nil, -1)
        // The trial whose end lifts the faults that last until it (segment, turn, trial).
        var ending: (ObjectIdentifier, Int, Int)? = nil
        let lines = buttonLines
        while !dogStop.load(ordering: .acquiring) {
            usleep(20_000)
            switching.lock()
            let segment = self.segment
            switching.unlock()
            if let (owner, turn, trial) = ending {
                let still =
                    segment.map {
                        ObjectIdentifier($0) == owner && $0.feeder.searching.load(ordering: .acquiring) == turn
                    }
                    ?? false
                if !still {
                    faultInjector?.trialOver(trial: trial)
                    ending = nil
                }
            }
            guard let segment else { continue }
            let turn =
                segment.trainerLed
                ? segment.feeder.exercising.load(ordering: .acquiring)
                : segment.feeder.searching.load(ordering: .acquiring)
            let layoutIndex = segment.trainerLed ? turn - 1 : turn
            let key = (ObjectIdentifier(segment), turn)
            guard layoutIndex >= 0, layoutIndex < segment.layouts.count,
                key.0 != lastSearched.0 || key.1 != lastSearched.1
            else { continue }
            lastSearched = key
            // A threshold trial's target is the dilution its procedure chose.
            let layout = segment.layout(layoutIndex)
            // Trials count from 1 in each session; a trainer-led repetition counts as one.
            let trial = segment.trainerLed ? turn : turn + 1
            faultInjector?.searchStarted(trial: trial)
            ending = segment.trainerLed ? nil : (key.0, turn, trial)
            edges.removeAll(keepingCapacity: true)
            dog.search(
                layout: layout.stations, startAt: MonotonicClock.now(), into: &edges,
                concentration: segment.threshold?.concentration(
                    of: layout.targetStation.flatMap {
                        layout.stations[$0].sampleID
                    }))
            edges.sort { $0.at < $1.at }
            let presses =
                segment.trainerLed ? trainerPresses(edges, layout: layout, hold: segment.hold, lines: lines) : []
            // The dog searches the lineup's positions; each is one of the board's stations.
            for k in edges.indices where edges[k].station < segment.usedStations.count {
                edges[k].station = segment.usedStations[edges[k].station]
            }
            edges += presses
            edges.sort { $0.at < $1.at }
            for edge in edges {
                let still =
                    segment.trainerLed
                    ? segment.feeder.exercising.load(ordering: .acquiring)
                    : segment.feeder.searching.load(ordering: .acquiring)
                if dogStop.load(ordering: .acquiring) || still != turn { break }
                // In short steps, so a stopping station never waits for the dog's next move.
                while MonotonicClock.now() < edge.at, !dogStop.load(ordering: .acquiring) {
                    MonotonicClock.sleep(until: min(edge.at, MonotonicClock.now() &+ 20_000_000))
                }
                if dogStop.load(ordering: .acquiring) { break }
                lineup.inject(line: UInt32(edge.station), active: edge.present)
            }
            faultInjector?.searchOver(trial: trial)
            // A nose left at a station would hold the next trial's sensor: lift it.
            for line in 0..<inputs.count where lineup.level(of: UInt32(line)) == true {
                lineup.inject(line: UInt32(line), active: false)
            }
        }
    }

    /// The virtual trainer's button presses for a search: a visit held for `hold` earns the
    /// clicker at the target and the error button elsewhere, pressed at the hold's end.
    func trainerPresses(
        _ edges: [RawEdge], layout: TrialLayout, hold: UInt64, lines: (ready: UInt32, clicker: UInt32, error: UInt32)
    ) -> [RawEdge] {
        var presses: [RawEdge] = []
        var since: [Int: UInt64] = [:]
        var leftAt: [Int: UInt64] = [:]
        let chatter: UInt64 = 20_000_000
        func press(_ line: UInt32, at t: UInt64) {
            guard line != .max else { return }
            presses.append(RawEdge(station: Int(line), present: true, at: t))
            presses.append(RawEdge(station: Int(line), present: false, at: t &+ 30_000_000))
        }
        func close(_ station: Int, at end: UInt64) {
            guard let start = since.removeValue(forKey: station), end &- start >= hold else { return }
            let isTarget = station < layout.stations.count && layout.stations[station].kind == .target
            press(isTarget ? lines.clicker : lines.error, at: start &+ hold)
        }
        for edge in edges where edge.station < layout.stations.count {
            if edge.present {
                // Back within the chatter span: the same visit goes on; later, a new visit.
                if let left = leftAt.removeValue(forKey: edge.station), edge.at &- left >= chatter {
                    close(edge.station, at: left)
                }
                if since[edge.station] == nil { since[edge.station] = edge.at }
            } else {
                leftAt[edge.station] = edge.at
            }
        }
        // Visits end at their last departure.
        for (station, end) in leftAt { close(station, at: end) }
        for station in Array(since.keys) { close(station, at: edges.last?.at ?? 0) }
        return presses
    }
}
