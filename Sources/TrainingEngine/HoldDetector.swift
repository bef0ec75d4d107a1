// Sniff or indication: a nose visit shorter than the hold time T is a sniff; staying at one
// station for at least T is an indication. Beams flicker as the dog breathes and shifts, so a
// break shorter than the tolerance does not end the visit (and counts toward the hold).

/// Tracks the dog's current nose visit from debounced station edges.
public struct HoldDetector: Sendable, Hashable {
    public enum Event: Sendable, Hashable {
        case none
        /// The hold at `station` reached T: from `heldFrom` to `at` (arrival + T, or the
        /// returning edge when the hold time passed during a tolerated break).
        case indication(station: Int, heldFrom: Nanoseconds, at: Nanoseconds)
        /// The visit ended at `to` (the departure that was not followed by a return in time).
        case visitEnded(station: Int, from: Nanoseconds, to: Nanoseconds, indicated: Bool)
    }

    public var hold: Nanoseconds
    public var tolerance: Nanoseconds
    /// The station of the current visit, or -1.
    public private(set) var station = -1
    private var visitStart: Nanoseconds = 0
    private var present = false
    private var leftAt: Nanoseconds = 0
    private var indicated = false

    public init(hold: Nanoseconds, tolerance: Nanoseconds) {
        self.hold = hold
        self.tolerance = tolerance
    }

    /// The station the nose is at now, if any (for attributing a manual click).
    public var stationPresent: Int? { station >= 0 && present ? station : nil }

    /// Forgets the current visit (a new trial).
    public mutating func reset() {
        station = -1
        present = false
        indicated = false
    }

    /// When `expire(at:)` must be called next, if ever.
    public var deadline: Nanoseconds? {
        guard station >= 0 else { return nil }
        if !present { return leftAt &+ tolerance }
        return indicated ? nil : visitStart &+ hold
    }

    /// The nose arrived at `station`. May end the previous visit, or complete a hold that
    /// reached T while the beam was briefly broken.
    public mutating func arrive(station s: Int, at t: Nanoseconds) -> Event {
        if s == station && !present && t &- leftAt < tolerance && t >= leftAt {
            present = true
            if !indicated && elapsed(from: visitStart, to: t) >= hold {
                indicated = true
                return .indication(station: s, heldFrom: visitStart, at: t)
            }
            return .none
        }
        if s == station && present { return .none }  // a repeated edge: already here
        var event = Event.none
        if station >= 0 {
            event = .visitEnded(
                station: station, from: visitStart, to: present ? t : leftAt, indicated: indicated)
        }
        station = s
        visitStart = t
        present = true
        indicated = false
        return event
    }

    /// The nose left `station`. Only the current visit's station matters.
    public mutating func leave(station s: Int, at t: Nanoseconds) -> Event {
        guard s == station && present else { return .none }
        // The hold may have completed before this edge if the caller had not fired the timer yet.
        var event = Event.none
        if !indicated && elapsed(from: visitStart, to: t) >= hold {
            indicated = true
            event = .indication(station: s, heldFrom: visitStart, at: visitStart &+ hold)
        }
        present = false
        leftAt = t
        return event
    }

    /// Time has reached `now`: a hold may be complete, or a break may have become a departure.
    public mutating func expire(at now: Nanoseconds) -> Event {
        guard station >= 0 else { return .none }
        if present {
            if !indicated && elapsed(from: visitStart, to: now) >= hold {
                indicated = true
                return .indication(station: station, heldFrom: visitStart, at: visitStart &+ hold)
            }
            return .none
        }
        if elapsed(from: leftAt, to: now) >= tolerance {
            let event = Event.visitEnded(
                station: station, from: visitStart, to: leftAt, indicated: indicated)
            station = -1
            return event
        }
        return .none
    }

    /// Ends the current visit at `t` (the trial is over), if there is one.
    public mutating func close(at t: Nanoseconds) -> Event {
        guard station >= 0 else { return .none }
        let event = Event.visitEnded(
            station: station, from: visitStart, to: present ? t : leftAt, indicated: indicated)
        reset()
        return event
    }
}
