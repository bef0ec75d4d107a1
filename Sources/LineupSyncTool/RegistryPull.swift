import Foundation
import LabLink
import LabStore
import SessionLog
import StationControl
import TrainingEngine

/// What a pull brought: ids added to the station's log, ids it had already, those lineupd
/// left out and why, and why the pull stopped, when it did.
struct PullReport: Codable {
    var dogsAdded: [String] = []
    var samplesAdded: [String] = []
    var present = 0
    var refused: [RegistryRefusal] = []
    /// The lab's counts of samples' uses on other stations: logged now (they changed), said
    /// already (the log held the same), and when the store counted them.
    var usesLogged = 0
    var usesUnchanged = 0
    var usesAsOfWallNs: Int64?
    var error: String?

    var lines: [String] {
        var lines = refused.map { "lineup-sync: not pulled: \($0.reason)" }
        if let error { lines.append("lineup-sync: \(error)") }
        lines.append(
            "pulled from the lab's registry: \(dogsAdded.count) dogs and \(samplesAdded.count) samples added, "
                + "\(present) already here, \(refused.count) not pulled")
        if usesAsOfWallNs != nil {
            lines.append(
                "the lab's uses of samples on other stations: \(usesLogged) counts logged, \(usesUnchanged) unchanged")
        }
        return lines
    }
}

/// The registry's step on a station: the lab's dogs (those that count as themselves: a dog
/// merged into another counts as that one) and samples the station's log lacks, handed to
/// lineupd, the log's only writer, a few at a time (one request is one line of at most
/// ControlProtocol.maxLineBytes). Programs are not carried: a station reads program files
/// from its own directory, and the store lists the lab's programs by their text's SHA-256.
/// Then each sample's uses on the lab's other stations (in all, and with each of this
/// station's dogs as the lab counts it, across recorded merges), for lineupd to log and count
/// against the sample's limits (`registry-uses`).
struct RegistryPull {
    /// Each dilution after its stock (a dilution of a dilution after that one): lineupd writes
    /// a request's samples in order, and a dilution names a stock its log must hold already.
    /// Otherwise in the registry's order.
    static func stocksFirst(_ samples: [RegistrySample]) -> [RegistrySample] {
        let wanted = Set(samples.map(\.id))
        var placed = Set<String>()
        var ordered: [RegistrySample] = []
        var waiting = samples
        while !waiting.isEmpty {
            let ready = waiting.filter { sample in
                sample.stockId.map { !wanted.contains($0) || placed.contains($0) } ?? true
            }
            // A cycle (no store holds one: a stock is made before its dilutions) is sent as it is.
            let next = ready.isEmpty ? waiting : ready
            ordered += next
            placed.formUnion(next.map(\.id))
            let nextIds = Set(next.map(\.id))
            waiting.removeAll { nextIds.contains($0.id) }
        }
        return ordered
    }

    var settings: LabConnection
    var reader: LogReader
    var socket: String
    var perRequest = 20

    func run() async -> PullReport {
        var report = PullReport()
        let labDogs: [LabDog]
        let samples: [LabSample]
        let elsewhere: (asOfWallNs: Int64, uses: [LabSampleUse])
        do {
            guard let station = try reader.logIdentity() else {
                report.error = "the log has no station identity yet (start lineupd on it once)"
                return report
            }
            let store = try await LabStore.connect(settings)
            let registry = LabRegistry(store: store)
            do {
                labDogs = try await registry.dogs()
                samples = try await registry.samples()
                elsewhere = try await registry.usesElsewhere(than: station)
            } catch {
                await store.close()
                throw error
            }
            await store.close()
        } catch {
            report.error = "\(error)"
            return report
        }
        let dogs = labDogs.filter { $0.mergedInto == nil }
        do {
            // The log is read to send only what it lacks; lineupd checks again before writing.
            let haveDogs = Set(try reader.dogs().map(\.id))
            let haveSamples = Set(try reader.samples().map(\.id))
            report.present =
                dogs.filter { haveDogs.contains($0.id) }.count
                + samples.filter { haveSamples.contains($0.id) }.count
            var additions: [RegistryAddition] = []
            for chunk in chunks(dogs.filter { !haveDogs.contains($0.id) }) {
                additions.append(
                    RegistryAddition(dogs: chunk.map { RegistryDog(id: $0.id, name: $0.name, born: $0.born) }))
            }
            var wanted: [RegistrySample] = []
            for sample in samples where !haveSamples.contains(sample.id) {
                guard let kind = SampleKind(rawValue: sample.kind) else {
                    report.refused.append(
                        RegistryRefusal(
                            id: sample.id,
                            reason: "the lab's sample \(sample.label) (\(sample.id)) is of a kind "
                                + "this station does not know, `\(sample.kind)`"))
                    continue
                }
                var entry = RegistrySample(
                    id: sample.id, label: sample.label, kind: kind, facts: sample.facts, maxUses: sample.maxUses,
                    maxUsesPerDog: sample.maxUsesPerDog)
                entry.stockId = sample.stockId
                entry.dilutionFactor = sample.dilutionFactor
                entry.concentration = sample.concentration
                entry.concentrationUnit = sample.concentrationUnit
                entry.diluent = sample.diluent
                entry.madeOn = sample.madeOn
                entry.madeBy = sample.madeBy
                wanted.append(entry)
            }
            wanted = Self.stocksFirst(wanted)
            for chunk in chunks(wanted) { additions.append(RegistryAddition(samples: chunk)) }
            let client = ControlClient(path: socket)
            for var addition in additions {
                addition.labUsesFollow = true
                let added = try client.send(addition)
                let dogIds = Set(addition.dogs.map(\.id))
                report.dogsAdded += added.added.filter { dogIds.contains($0) }
                report.samplesAdded += added.added.filter { !dogIds.contains($0) }
                report.present += added.present.count
                report.refused += added.refused
            }
            let countsAs = Dictionary(labDogs.map { ($0.id, $0.countsAs) }, uniquingKeysWith: { first, _ in first })
            let requests = try usesRequests(elsewhere.uses, asOfWallNs: elsewhere.asOfWallNs, countsAs: countsAs)
            for request in requests {
                let logged: RegistryUsesLogged
                do {
                    logged = try client.send(request)
                } catch {
                    if Self.isUnknownRequest(error) {
                        report.error =
                            "lineupd at \(socket) is older than this lineup-sync: it does not take the lab's sample uses "
                            + "(registry-uses), so its limits count its own log only; update lineupd"
                        return report
                    }
                    throw error
                }
                report.usesLogged += logged.written
                report.usesUnchanged += logged.unchanged
            }
            report.usesAsOfWallNs = elsewhere.asOfWallNs
        } catch let error as ControlClientError {
            report.error = "lineupd at \(socket): \(error)"
        } catch {
            report.error = "\(error)"
        }
        return report
    }

    /// One entry per sample of the station's log (read again, so samples just added count),
    /// whole for its sample: the uses elsewhere in all, and the trials there with each of this
    /// station's dogs that met it, by the dog the lab counts it as (a dog the store does not
    /// have yet counts as itself). Entries go a few at a time, about 200 counts a request.
    func usesRequests(_ uses: [LabSampleUse], asOfWallNs: Int64, countsAs: [String: String]) throws -> [RegistryUses] {
        var bySample: [String: [LabSampleUse]] = [:]
        for use in uses { bySample[use.sampleId, default: []].append(use) }
        let stationDogs = try reader.dogs().map(\.id)
        var requests: [RegistryUses] = []
        var entries: [RegistrySampleUses] = []
        var counts = 0
        for sample in try reader.samples().map(\.id).sorted() {
            let rows = bySample[sample] ?? []
            let dogs = stationDogs.sorted().compactMap { dog -> RegistryDogUses? in
                let identity = countsAs[dog] ?? dog
                let trials = rows.filter { $0.dogCountsAs == identity }.reduce(0) { $0 + $1.trials }
                return trials > 0 ? RegistryDogUses(dog: dog, trials: trials) : nil
            }
            entries.append(RegistrySampleUses(sample: sample, uses: rows.reduce(0) { $0 + $1.uses }, dogs: dogs))
            counts += 1 + dogs.count
            if counts >= 200 {
                requests.append(RegistryUses(asOfWallNs: asOfWallNs, samples: entries))
                (entries, counts) = ([], 0)
            }
        }
        if !entries.isEmpty { requests.append(RegistryUses(asOfWallNs: asOfWallNs, samples: entries)) }
        return requests
    }

    /// An older lineupd's answer to a request it does not know.
    static func isUnknownRequest(_ error: any Error) -> Bool {
        guard let error = error as? ControlClientError, case .refused(let refusal) = error else { return false }
        return refusal.code == .unknownRequest
    }

    func chunks<T>(_ items: [T]) -> [[T]] {
        stride(from: 0, to: items.count, by: perRequest).map { Array(items[$0..<min($0 + perRequest, items.count)]) }
    }
}
