// A simulated dog for the simulated lineup: given a trial's layout it produces the raw sensor
// edges of its search, chatter included, so a simulated session runs exactly the code a real
// one does (debounce, hold detection, the state machine, scoring). Pure and seeded.

import Thresholds
import TrainingEngine

/// One raw sensor edge as a station's input line would report it (not debounced).
public struct RawEdge: Sendable, Hashable {
    public var station: Int
    /// True: the beam is broken (a nose is there). Active-low wiring is the station's business.
    public var present: Bool
    public var at: Nanoseconds

    public init(station: Int, present: Bool, at: Nanoseconds) {
        self.station = station
        self.present = present
        self.at = at
    }
}

/// How the simulated dog behaves.
public struct DogParameters: Sendable, Hashable {
    /// Chance of holding an indication when it examines the target.
    public var sensitivity: Double
    /// Chance of holding an indication at each non-target station it examines.
    public var falseAlertRate: Double
    /// Seconds from the start cue to the first station.
    public var startLatencySeconds: ClosedRange<Double>
    /// Seconds to move from one station to the next (its search speed).
    public var travelSeconds: ClosedRange<Double>
    /// How long a sniff lasts; keep it below the station's hold time.
    public var sniffSeconds: ClosedRange<Double>
    /// How long the dog holds when it indicates; keep it above the hold time.
    public var indicationHoldSeconds: Double
    /// Quick toggles at each arrival and departure, as real beams and switches do; 0 for none.
    public var chatterToggles: Int
    /// The span of those toggles, in milliseconds.
    public var chatterSpanMilliseconds: Double
    /// Chance of a brief beam break in the middle of an indication hold (breathing, a shift).
    public var holdBreakChance: Double
    /// Length of such a break; keep it below the station's hold tolerance.
    public var holdBreakMilliseconds: Double
    /// The memorising switch: nil, the dog finds every target alike; set, it holds more
    /// surely at targets it has met often (the memorisation Elliker et al. 2014 report).
    public var memorising: Memorising? = nil
    /// A dog with a detection threshold (issue 38): at a target dilution it holds with its
    /// curve's chance at that concentration, not `sensitivity`; nil: every target alike.
    public var threshold: PsychometricCurve? = nil

    public init(
        sensitivity: Double = 0.71, falseAlertRate: Double = 0.07, startLatencySeconds: ClosedRange<Double> = 0.5...2,
        travelSeconds: ClosedRange<Double> = 0.4...1.5, sniffSeconds: ClosedRange<Double> = 0.2...1.2,
        indicationHoldSeconds: Double = 3, chatterToggles: Int = 0, chatterSpanMilliseconds: Double = 2,
        holdBreakChance: Double = 0, holdBreakMilliseconds: Double = 60
    ) {
        self.sensitivity = sensitivity
        self.falseAlertRate = falseAlertRate
        self.startLatencySeconds = startLatencySeconds
        self.travelSeconds = travelSeconds
        self.sniffSeconds = sniffSeconds
        self.indicationHoldSeconds = indicationHoldSeconds
        self.chatterToggles = chatterToggles
        self.chatterSpanMilliseconds = chatterSpanMilliseconds
        self.holdBreakChance = holdBreakChance
        self.holdBreakMilliseconds = holdBreakMilliseconds
    }
}

/// A dog that memorises samples: at a target sample it has met at least `after` times before
/// (in any station, as any kind), it holds with `familiarSensitivity` instead of `sensitivity`.
/// The numbers are the simulation's settings, not figures from a study.
public struct Memorising: Sendable, Hashable {
    public var after: Int
    public var familiarSensitivity: Double

    public init(after: Int = 3, familiarSensitivity: Double = 0.98) {
        self.after = after
        self.familiarSensitivity = familiarSensitivity
    }
}

/// A seeded virtual dog.
public struct VirtualDog: Sendable {
    public var parameters: DogParameters
    private var random: SeededGenerator
    /// How many searches each sample (by id) stood in, as this dog met them: what a memorising
    /// dog remembers. A caller may start it from the log's exposure.
    public var met: [String: Int] = [:]

    public init(parameters: DogParameters, seed: UInt64) {
        self.parameters = parameters
        self.random = SeededGenerator(seed: seed)
    }

    /// Appends to `edges` the raw edges of one search of a lineup holding `kinds`, starting at
    /// the start cue `startAt`. The dog examines each station once in a random order, sniffing
    /// or holding; after holding at the target it stops (it has been clicked). Edges come out
    /// in time order. Returns the time the dog finished.
    @discardableResult
    public mutating func search(kinds: [SampleKind], startAt: Nanoseconds, into edges: inout [RawEdge]) -> Nanoseconds {
        search(kinds: kinds, targetSensitivity: parameters.sensitivity, startAt: startAt, into: &edges)
    }

    /// One search of a laid-out lineup: as `search(kinds:)`, and a memorising dog holds at a
    /// target it has met often with its familiar sensitivity; every sample laid out counts as
    /// met afterwards (the dog could reach it, whatever it did).
    @discardableResult
    public mutating func search(
        layout: [StationContent], startAt: Nanoseconds, into edges: inout [RawEdge], concentration: Double? = nil
    )
        -> Nanoseconds
    {
        let kinds = layout.map(\.kind)
        // A threshold dog at a target of known strength: its curve's chance there. The curve's
        // guess rate is left out (a dog that does not smell the target does not hold at it; its
        // guesses are its false alerts at the other stations).
        if let curve = parameters.threshold, let concentration {
            return search(
                kinds: kinds, targetSensitivity: curve.probabilityFound(concentration: concentration),
                startAt: startAt, into: &edges)
        }
        guard let memorising = parameters.memorising else {
            return search(kinds: kinds, startAt: startAt, into: &edges)
        }
        let target = layout.first { $0.kind == .target }?.sampleID
        let familiar = target.map { (met[$0] ?? 0) >= memorising.after } ?? false
        let end = search(
            kinds: kinds, targetSensitivity: familiar ? memorising.familiarSensitivity : parameters.sensitivity,
            startAt: startAt, into: &edges)
        for case let id? in layout.map(\.sampleID) { met[id, default: 0] += 1 }
        return end
    }

    private mutating func search(
        kinds: [SampleKind], targetSensitivity: Double, startAt: Nanoseconds, into edges: inout [RawEdge]
    ) -> Nanoseconds {
        let p = parameters
        var t = startAt &+ nanoseconds(seconds: random.double(in: p.startLatencySeconds))
        // A random order, drawn without allocating: a small Fisher–Yates over station indices.
        var order = Array(kinds.indices)
        random.shuffle(&order)
        for (i, station) in order.enumerated() {
            if i > 0 { t &+= nanoseconds(seconds: random.double(in: p.travelSeconds)) }
            let isTarget = kinds[station] == .target
            let holds = random.chance(isTarget ? targetSensitivity : p.falseAlertRate)
            emit(station: station, present: true, at: t, &edges)
            let stay = holds ? p.indicationHoldSeconds : random.double(in: p.sniffSeconds)
            let leave = t &+ nanoseconds(seconds: stay)
            if holds && p.holdBreakChance > 0 && random.chance(p.holdBreakChance) {
                // A brief break somewhere in the middle of the hold.
                let breakAt = t &+ nanoseconds(seconds: stay * random.double(in: 0.3...0.6))
                edges.append(RawEdge(station: station, present: false, at: breakAt))
                edges.append(
                    RawEdge(
                        station: station, present: true,
                        at: breakAt &+ nanoseconds(milliseconds: p.holdBreakMilliseconds)))
            }
            t = leave
            emit(station: station, present: false, at: t, &edges)
            if holds && isTarget { break }
        }
        // Finished once the departure's chatter has settled.
        return parameters.chatterToggles >= 2 ? t &+ nanoseconds(milliseconds: p.chatterSpanMilliseconds) : t
    }

    /// One clean edge, with chatter after it if configured (ending at the edge's level).
    private mutating func emit(station: Int, present: Bool, at t: Nanoseconds, _ edges: inout [RawEdge]) {
        edges.append(RawEdge(station: station, present: present, at: t))
        let toggles = parameters.chatterToggles - parameters.chatterToggles % 2  // even: end where we began
        guard toggles > 0 else { return }
        let step = nanoseconds(milliseconds: parameters.chatterSpanMilliseconds) / UInt64(toggles)
        var level = present
        for k in 1...toggles {
            level.toggle()
            edges.append(RawEdge(station: station, present: level, at: t &+ step * UInt64(k)))
        }
    }
}

/// Leading-edge debounce for the simulated lineup: act on the first edge that changes a line's
/// level, then ignore that line for `window`. (The board's own debouncer lives in StationIO;
/// this one only serves simulations and tests.)
public struct LeadingEdgeDebouncer: Sendable {
    public var window: Nanoseconds
    private var level: [Bool]
    private var lastAccepted: [Nanoseconds?]

    public init(stations: Int, window: Nanoseconds) {
        self.window = window
        level = Array(repeating: false, count: stations)
        lastAccepted = Array(repeating: nil, count: stations)
    }

    /// Whether this raw edge passes as a debounced edge.
    public mutating func accept(_ edge: RawEdge) -> Bool {
        let s = edge.station
        guard s >= 0 && s < level.count, edge.present != level[s] else { return false }
        if let last = lastAccepted[s], edge.at &- last < window { return false }
        level[s] = edge.present
        lastAccepted[s] = edge.at
        return true
    }

    /// All lines back to absent (the dog left the lineup between trials).
    public mutating func reset() {
        for s in level.indices {
            level[s] = false
            lastAccepted[s] = nil
        }
    }
}
