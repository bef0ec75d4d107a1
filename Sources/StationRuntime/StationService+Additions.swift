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

// The researcher's additions to the log and the simulated lineup moved by hand.
extension StationService {
    // MARK: The researcher's additions
    //
    // lineupd writes them because it owns the database: on a board the state directory is
    // the service user's, and the station's group may only read it. They are not events,
    // so they commit beside the writer's batches (GRDB serialises the writes), never on
    // the hot thread.

    public func addDog(_ entry: DogEntry) throws(ControlRefusal) -> String {
        try adding { try log.addDog(name: entry.name, born: entry.born, notes: entry.notes).id }
    }

    public func addSample(_ entry: SampleEntry) throws(ControlRefusal) -> String {
        try adding {
            try log.addSample(
                SampleRecord(
                    label: entry.label, kind: entry.kind, facts: entry.facts, maxUses: entry.maxUses,
                    maxUsesPerDog: entry.maxUsesPerDog)
            ).id
        }
    }

    public func addDilutions(_ entry: DilutionEntry) throws(ControlRefusal) -> DilutionsAdded {
        try refusing {
            let added = try log.addDilutions(
                of: entry.stock,
                entry.dilutions.map {
                    DilutionRung(label: $0.label, factor: $0.factor, concentration: $0.concentration, unit: $0.unit)
                },
                made: DilutionMaking(
                    kind: entry.kind, diluent: entry.diluent, madeOn: entry.madeOn, madeBy: entry.madeBy,
                    maxUses: entry.maxUses, maxUsesPerDog: entry.maxUsesPerDog))
            return DilutionsAdded(ids: added.map { $0.id.uuidString.lowercased() })
        }
    }

    public func noteSample(_ entry: SampleNoteEntry) throws(ControlRefusal) -> String {
        try adding { try log.noteSample(entry.sample, text: entry.text).id }
    }

    public func noteDog(_ entry: DogNoteEntry) throws(ControlRefusal) -> String {
        try adding { try log.noteDog(entry.dog, text: entry.text).id }
    }

    public func correctTrial(_ entry: TrialCorrectionEntry) throws(ControlRefusal) -> String {
        try adding {
            try log.correctTrial(
                entry.trial, outcome: entry.outcome, indicatedStation: entry.indicated, reason: entry.reason
            ).id
        }
    }

    public func noteSession(_ entry: SessionNoteEntry) throws(ControlRefusal) -> String {
        try adding { try log.noteSession(entry.session, text: entry.text).id }
    }

    /// The simulated world moved by hand: a nose at a station, or a button pressed.
    public func simulate(_ input: SimulatedInput) throws(ControlRefusal) {
        guard let simulated else {
            throw ControlRefusal(.badRequest, "this station's lineup is real: `simulate` is for lineupd --simulate")
        }
        let names = options.board.stations.map(\.name)
        let line: UInt32?
        switch input.input.lowercased() {
        case "clicker": line = inputs.line(of: .clicker)
        case "error": line = inputs.line(of: .errorButton)
        case "ready": line = inputs.line(of: .readyButton)
        default:
            if let i = names.firstIndex(of: input.input) {
                line = UInt32(i)
            } else if let n = Int(input.input), (1...names.count).contains(n) {
                line = UInt32(n - 1)
            } else {
                throw ControlRefusal(
                    .unknown,
                    "no input \"\(input.input)\": a station (\(names.joined(separator: ", ")) or 1-\(names.count)), "
                        + "clicker, error or ready")
            }
        }
        guard let line else {
            throw ControlRefusal(.unknown, "this board has no \(input.input) button")
        }
        guard simulated.inject(line: line, active: input.active) else {
            throw ControlRefusal(.failed, "the simulated lineup is full: try again")
        }
    }

    /// The log's refusals in the protocol's codes, with the log's own words.
    func adding(_ body: () throws -> UUID) throws(ControlRefusal) -> String {
        try refusing { try body().uuidString.lowercased() }
    }

    func refusing<Answer>(_ body: () throws -> Answer) throws(ControlRefusal) -> Answer {
        do {
            return try body()
        } catch let error as SessionLogError {
            switch error {
            case .invalidInput, .malformedDate: throw ControlRefusal(.badRequest, error.description)
            case .unknownDog, .unknownSample, .unknownTrial, .unknownSession, .ambiguousId, .ambiguousDogName:
                throw ControlRefusal(.unknown, error.description)
            case .duplicateDog, .duplicateSample: throw ControlRefusal(.duplicate, error.description)
            default: throw ControlRefusal(.failed, error.description)
            }
        } catch {
            throw ControlRefusal(.failed, "cannot write to the log: \(error)")
        }
    }
}
