import Foundation
import Glibc
import StationIO
import Synchronization

/// A broken sensor put on the simulated lineup by `--fault KIND:STATION[@FIRST[-LAST]]`:
/// the trials (1-based) it lasts, from FIRST (default 1) to LAST (default: the end).
public struct InjectedFault: Sendable, Hashable {
    enum Kind: String, Sendable, CaseIterable {
        /// The line goes active just after the start cue of the first trial and stays active.
        case stuck
        /// A storm: the line toggles every millisecond through each trial's search.
        case chatter
        /// The line never goes active, whatever the dog does.
        case dead
    }

    var kind: Kind
    /// 0-based.
    var station: Int
    var first: Int
    var last: Int?

    func covers(trial: Int) -> Bool { trial >= first && trial <= (last ?? .max) }

    static let syntax = "KIND:STATION[@FIRST[-LAST]], e.g. stuck:B@3, chatter:A@2-4, dead:3"

    /// Parses one `--fault` value against the board's station names; the error is one line
    /// naming what is wrong.
    public static func parse(_ text: String, stations: [String], trials: Int?) -> Result<
        InjectedFault, FaultSyntaxError
    > {
        func refuse(_ why: String) -> Result<InjectedFault, FaultSyntaxError> {
            .failure(FaultSyntaxError(message: "--fault \(text): \(why) (the form is \(syntax))"))
        }
        let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return refuse("no station: give KIND:STATION") }
        guard let kind = Kind(rawValue: String(parts[0]).lowercased()) else {
            let kinds = Kind.allCases.map(\.rawValue).joined(separator: ", ")
            return refuse("\"\(parts[0])\" is not a fault (\(kinds))")
        }
        let rest = parts[1].split(separator: "@", maxSplits: 1, omittingEmptySubsequences: false)
        let name = String(rest[0])
        let station: Int
        if let index = stations.firstIndex(of: name)
            ?? stations.firstIndex(where: { $0.lowercased() == name.lowercased() })
        {
            station = index
        } else if let number = Int(name), number >= 1, number <= stations.count {
            station = number - 1
        } else {
            return refuse(
                "no station \"\(name)\" (the stations are \(stations.joined(separator: ", ")), or 1 to \(stations.count))"
            )
        }
        var first = 1
        var last: Int? = nil
        if rest.count == 2 {
            let range = rest[1].split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
            guard let from = Int(range[0]), from >= 1 else {
                return refuse("\"\(rest[1])\" is not a trial: trials count from 1")
            }
            first = from
            if range.count == 2 {
                guard let to = Int(range[1]), to >= from else {
                    return refuse("\"\(rest[1])\" is not a range of trials (FIRST-LAST, LAST not before FIRST)")
                }
                last = to
            }
        }
        if let trials, first > trials {
            return refuse("trial \(first) is after the block's last (\(trials))")
        }
        return .success(InjectedFault(kind: kind, station: station, first: first, last: last))
    }

    /// Refuses two faults on one station in the same trials: which would win is anyone's guess.
    public static func overlap(_ faults: [InjectedFault], stations: [String]) -> String? {
        for (i, a) in faults.enumerated() {
            for b in faults[(i + 1)...] where a.station == b.station {
                if a.first <= (b.last ?? .max) && b.first <= (a.last ?? .max) {
                    return
                        "--fault: two faults on station \(stations[a.station]) in the same trials (\(a.kind.rawValue), \(b.kind.rawValue))"
                }
            }
        }
        return nil
    }
}

public struct FaultSyntaxError: Error {
    public var message: String
}

/// Plays the faults on the simulated lineup as the virtual dog's trials go by. Called from the
/// dog's thread; the storm has a thread of its own, putting its lines' toggles on the lineup
/// every millisecond (the lineup stamps each at its own millisecond: see `startStorm`).
final class FaultInjector: @unchecked Sendable {
    let faults: [InjectedFault]
    private let lineup: SimulatedLineup
    private let stopped = Atomic<Bool>(false)
    private var storm: Thread?

    init(faults: [InjectedFault], lineup: SimulatedLineup) {
        self.faults = faults
        self.lineup = lineup
        guard faults.contains(where: { $0.kind == .chatter }) else { return }
        let thread = Thread { [self] in
            while !stopped.load(ordering: .acquiring) {
                if let next = lineup.runStorm() { MonotonicClock.sleep(until: next) } else { usleep(2000) }
            }
        }
        thread.name = "lineup-storm"
        storm = thread
        thread.start()
    }

    /// The search of `trial` (1-based) has begun: the faults covering it take hold.
    func searchStarted(trial: Int) {
        for fault in faults where fault.covers(trial: trial) {
            let line = UInt32(fault.station)
            switch fault.kind {
            case .stuck: if lineup.fault(of: line) != .stuck { lineup.setFault(.stuck, line: line) }
            case .dead: lineup.setFault(.dead, line: line)
            case .chatter:
                lineup.setFault(.chatter, line: line)
                lineup.startStorm(line: line)
            }
        }
    }

    /// The dog has finished searching `trial`: storms end, the line back at the dog's level.
    func searchOver(trial: Int) {
        for fault in faults where fault.kind == .chatter && fault.covers(trial: trial) {
            // The storm's last toggles, then the line handed back: one after the other in the pipe.
            lineup.stopStorm(line: UInt32(fault.station))
            lineup.setFault(nil, line: UInt32(fault.station))
        }
    }

    /// `trial` is over: faults whose last trial it was are lifted.
    func trialOver(trial: Int) {
        for fault in faults where fault.kind != .chatter && fault.last == trial {
            lineup.setFault(nil, line: UInt32(fault.station))
        }
    }

    func stop() {
        for fault in faults where fault.kind == .chatter { lineup.stopStorm(line: UInt32(fault.station)) }
        stopped.store(true, ordering: .releasing)
        while let storm, !storm.isFinished { usleep(1000) }
    }
}
