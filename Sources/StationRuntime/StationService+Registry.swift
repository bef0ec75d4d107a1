import Foundation
import SessionLog
import StationControl

// Dogs and samples of the lab's registry, pulled from the lab store by lineup-sync and written
// here by lineupd (the log's only writer) with the ids they were made with on their station, so
// that a session for a lab dog syncs back under the lab's id.
extension StationService {
    /// The whole request is checked before anything is written; then each dog or sample is its
    /// own transaction. One already in the log (by id) is left as it is, so pulling twice adds
    /// nothing; one whose name or label this station gives another is left out with why, since
    /// sessions and lineups name dogs and samples by them.
    public func addFromRegistry(_ addition: RegistryAddition) throws(ControlRefusal) -> RegistryAdded {
        guard addition.labUsesFollow == true else {
            throw ControlRefusal(
                .badVersion,
                "registry-add from a lineup-sync older than this lineupd: it brings no lab-wide sample uses, "
                    + "so this station's limits would count its own log only; update lineup-sync to pull")
        }
        var dogs: [DogRecord] = []
        var samples: [SampleRecord] = []
        do {
            for dog in addition.dogs {
                guard let id = UUID(uuidString: dog.id) else {
                    throw ControlRefusal(.badRequest, "registry dog \(dog.name): `\(dog.id)` is not a UUID")
                }
                let name = dog.name.trimmingCharacters(in: .whitespacesAndNewlines)
                guard !name.isEmpty else { throw ControlRefusal(.badRequest, "registry dog \(dog.id) has no name") }
                dogs.append(
                    DogRecord(id: id, name: name, born: try dog.born.map { try ResearcherDate.validateDay($0) }))
            }
            for sample in addition.samples {
                guard let id = UUID(uuidString: sample.id) else {
                    throw ControlRefusal(.badRequest, "registry sample \(sample.label): `\(sample.id)` is not a UUID")
                }
                for (name, limit) in [("max_uses", sample.maxUses), ("max_uses_per_dog", sample.maxUsesPerDog)] {
                    if let limit, limit < 1 {
                        throw ControlRefusal(
                            .badRequest, "registry sample \(sample.label): \(name) \(limit) is below 1")
                    }
                }
                var record = SampleRecord(
                    id: id, label: sample.label, kind: sample.kind, facts: try sample.facts.checked(),
                    maxUses: sample.maxUses, maxUsesPerDog: sample.maxUsesPerDog)
                record.dilution = try Self.registryDilution(sample)
                samples.append(record)
            }
        } catch let refusal as ControlRefusal {
            throw refusal
        } catch {
            throw ControlRefusal(.badRequest, "registry-add: \(error)")
        }
        var reply = RegistryAdded()
        do {
            let reader = log.reader
            let haveDogs = try reader.dogs()
            let dogIds = Set(haveDogs.map(\.id))
            for dog in dogs {
                let id = dog.id.uuidString.lowercased()
                if dogIds.contains(id) {
                    reply.present.append(id)
                } else if let namesake = haveDogs.first(where: { $0.name.lowercased() == dog.name.lowercased() }) {
                    reply.refused.append(
                        RegistryRefusal(
                            id: id,
                            reason:
                                "this station's dog \(namesake.id) is named \(namesake.name): a session names its dog, "
                                + "so the lab's dog \(dog.name) (\(id)) was not added here"))
                } else {
                    try log.append([dog])
                    reply.added.append(id)
                }
            }
            let haveSamples = try reader.samples()
            var sampleIds = Set(haveSamples.map(\.id))
            for sample in samples {
                let id = sample.id.uuidString.lowercased()
                let stock = sample.dilution.map { $0.stockId.uuidString.lowercased() }
                if sampleIds.contains(id) {
                    reply.present.append(id)
                } else if let stock, !sampleIds.contains(stock) {
                    reply.refused.append(
                        RegistryRefusal(
                            id: id,
                            reason: "the lab's sample \(sample.label) (\(id)) is a dilution of \(stock), which this "
                                + "station does not have (not pulled, or left out): it was not added here"))
                } else if let namesake = haveSamples.first(where: { $0.label == sample.label }) {
                    reply.refused.append(
                        RegistryRefusal(
                            id: id,
                            reason: "this station's sample \(namesake.id) is labelled \(sample.label): a lineup names "
                                + "its samples by label, so the lab's sample \(id) was not added here"))
                } else {
                    try log.append([sample])
                    reply.added.append(id)
                    sampleIds.insert(id)
                }
            }
        } catch let error as SessionLogError {
            throw ControlRefusal(.failed, "cannot add from the lab's registry: \(error.description)")
        } catch {
            throw ControlRefusal(.failed, "cannot add from the lab's registry: \(error)")
        }
        return reply
    }
}

extension StationService {
    /// A registry sample's dilution, checked by the rules a dilution added here meets
    /// (`DilutionCheck`); nil when it names no stock (it is no dilution).
    static func registryDilution(_ sample: RegistrySample) throws -> SampleDilution? {
        guard let stockText = sample.stockId else { return nil }
        guard let stock = UUID(uuidString: stockText) else {
            throw ControlRefusal(
                .badRequest, "registry sample \(sample.label): its stock `\(stockText)` is not a UUID")
        }
        do {
            let (rungs, made) = try DilutionCheck.checked(
                [
                    DilutionRung(
                        label: sample.label, factor: sample.dilutionFactor, concentration: sample.concentration,
                        unit: sample.concentrationUnit)
                ], DilutionMaking(diluent: sample.diluent, madeOn: sample.madeOn, madeBy: sample.madeBy))
            return SampleDilution(
                stockId: stock, factor: rungs[0].factor, concentration: rungs[0].concentration,
                concentrationUnit: rungs[0].unit, diluent: made.diluent, madeOn: made.madeOn, madeBy: made.madeBy)
        } catch let error as SessionLogError {
            throw ControlRefusal(.badRequest, "registry sample \(sample.label): \(error.description)")
        }
    }
}

extension StationService {
    /// The lab's counts of samples' uses on other stations, logged where they differ from the
    /// latest the log holds (`SessionLog.logLabUses`); a session's start counts them beside
    /// this log's own (`resolveSamples`).
    public func logLabUses(_ uses: RegistryUses) throws(ControlRefusal) -> RegistryUsesLogged {
        let pulled = uses.samples.map { sample in
            LabSampleUsesPulled(
                sampleId: sample.sample.lowercased(),
                uses: sample.uses,
                dogs: Dictionary(sample.dogs.map { ($0.dog.lowercased(), $0.trials) }, uniquingKeysWith: max))
        }
        do {
            let (written, unchanged) = try log.logLabUses(pulled, asOfWallNs: uses.asOfWallNs)
            return RegistryUsesLogged(written: written, unchanged: unchanged)
        } catch let error as SessionLogError {
            throw ControlRefusal(.failed, "cannot log the lab's sample uses: \(error.description)")
        } catch {
            throw ControlRefusal(.failed, "cannot log the lab's sample uses: \(error)")
        }
    }
}
