import StationIO
import TrainingEngine

/// An engine note as the station's ring carries it: one `HandlerRecord` (a trial's end as two,
/// its times first), so the notes keep their place among the edges and clicks. Stations and
/// trials are small signed numbers (-1: none), kept as their bit patterns.
extension EngineNote {
    enum Kind: UInt8 {
        case searchStarted = 1
        case visit, indication, cue, clickAsked, trialEndTimes, trialEnded, interTrialOver
        case manualClick, errorMark, exerciseStarted, exerciseEnded, sensorFault, sensorRecovered
    }

    /// The record before `record`, for the one note too large for one (a trial's end: its times).
    var leadingRecord: HandlerRecord? {
        guard case .trialEnded(let end) = self else { return nil }
        return HandlerRecord(
            kind: Kind.trialEndTimes.rawValue, end.firstAt, end.startedAt, end.endedAt, end.sensorFaultMask)
    }

    var record: HandlerRecord {
        switch self {
        case .searchStarted(let trial, let at): return Self.make(.searchStarted, w(trial), at)
        case .visit(let station, let from, let to, let indicated):
            return Self.make(.visit, w(station), from, to, indicated ? 1 : 0)
        case .indication(let station, let heldFrom, let at, let atTarget):
            return Self.make(.indication, w(station), heldFrom, at, atTarget ? 1 : 0)
        case .cue(let trialStart, let at): return Self.make(.cue, trialStart ? 1 : 0, at)
        case .clickAsked(let station, let at, let trainer):
            return Self.make(.clickAsked, w(station), at, trainer ? 1 : 0)
        case .trialEnded(let end):
            // Trial, outcome and the two stations in one word: a trial number below 2^32 and
            // stations below 255 (the masks allow 64).
            let packed =
                UInt64(UInt32(truncatingIfNeeded: end.trial)) | UInt64(end.outcome.rawValue) << 32
                | UInt64(UInt8(truncatingIfNeeded: end.target + 1)) << 40
                | UInt64(UInt8(truncatingIfNeeded: end.firstStation + 1)) << 48
            return Self.make(.trialEnded, packed, end.visitedMask, end.indicatedMask)
        case .interTrialOver(let at): return Self.make(.interTrialOver, at)
        case .manualClick(let station, let at): return Self.make(.manualClick, w(station), at)
        case .errorMark(let station, let at): return Self.make(.errorMark, w(station), at)
        case .exerciseStarted(let repetition, let at): return Self.make(.exerciseStarted, w(repetition), at)
        case .exerciseEnded(let repetition, let clicks, let errors, let aborted, let at):
            return Self.make(
                .exerciseEnded, w(repetition),
                UInt64(UInt32(truncatingIfNeeded: clicks)) << 32 | UInt64(UInt32(truncatingIfNeeded: errors)),
                aborted ? 1 : 0, at)
        case .sensorFault(let fault, let station, let at): return Self.make(.sensorFault, fault.word, w(station), at)
        case .sensorRecovered(let station, let at): return Self.make(.sensorRecovered, w(station), at)
        }
    }

    @inline(__always)
    private static func make(_ kind: Kind, _ a: UInt64 = 0, _ b: UInt64 = 0, _ c: UInt64 = 0, _ d: UInt64 = 0)
        -> HandlerRecord
    {
        HandlerRecord(kind: kind.rawValue, a, b, c, d)
    }

    /// Reads the notes back, in the ring's order: a trial's end waits in `times` for its second
    /// record, which the engine handler always pushes right after the first.
    struct Decoder {
        private var times: HandlerRecord?

        /// The note `record` completes, or nil (a trial end's first half, or a kind this build
        /// does not know, which the hot thread of this build never makes).
        mutating func note(_ record: HandlerRecord) -> EngineNote? {
            guard let kind = Kind(rawValue: record.kind) else { return nil }
            switch kind {
            case .searchStarted: return .searchStarted(trial: i(record.a), at: record.b)
            case .visit: return .visit(station: i(record.a), from: record.b, to: record.c, indicated: record.d != 0)
            case .indication:
                return .indication(station: i(record.a), heldFrom: record.b, at: record.c, atTarget: record.d != 0)
            case .cue: return .cue(trialStart: record.a != 0, at: record.b)
            case .clickAsked: return .clickAsked(station: i(record.a), at: record.b, trainer: record.c != 0)
            case .trialEndTimes:
                times = record
                return nil
            case .trialEnded:
                let t = times ?? HandlerRecord(kind: 0)
                times = nil
                let packed = record.a
                return .trialEnded(
                    TrialEnd(
                        trial: Int(UInt32(truncatingIfNeeded: packed)),
                        outcome: OutcomeCode(rawValue: UInt8(truncatingIfNeeded: packed >> 32)) ?? .aborted,
                        target: Int(UInt8(truncatingIfNeeded: packed >> 40)) - 1, visitedMask: record.b,
                        indicatedMask: record.c, firstStation: Int(UInt8(truncatingIfNeeded: packed >> 48)) - 1,
                        firstAt: t.a, startedAt: t.b, endedAt: t.c, sensorFaultMask: t.d))
            case .interTrialOver: return .interTrialOver(at: record.a)
            case .manualClick: return .manualClick(station: i(record.a), at: record.b)
            case .errorMark: return .errorMark(station: i(record.a), at: record.b)
            case .exerciseStarted: return .exerciseStarted(repetition: i(record.a), at: record.b)
            case .exerciseEnded:
                return .exerciseEnded(
                    repetition: i(record.a), clicks: Int(UInt32(truncatingIfNeeded: record.b >> 32)),
                    errors: Int(UInt32(truncatingIfNeeded: record.b)), aborted: record.c != 0, at: record.d)
            case .sensorFault:
                guard let fault = SensorFault(word: record.a) else { return nil }
                return .sensorFault(fault, station: i(record.b), at: record.c)
            case .sensorRecovered: return .sensorRecovered(station: i(record.a), at: record.b)
            }
        }
    }
}

@inline(__always) private func w(_ value: Int) -> UInt64 { UInt64(bitPattern: Int64(value)) }
@inline(__always) private func i(_ word: UInt64) -> Int { Int(Int64(bitPattern: word)) }

/// A sensor fault as one word of a ring record (the engine's enum is spelled by strings).
extension SensorFault {
    @inline(__always) var word: UInt64 {
        switch self {
        case .activeAtStart: 0
        case .stuck: 1
        case .silent: 2
        case .chatter: 3
        }
    }

    init?(word: UInt64) {
        switch word {
        case 0: self = .activeAtStart
        case 1: self = .stuck
        case 2: self = .silent
        case 3: self = .chatter
        default: return nil
        }
    }
}
