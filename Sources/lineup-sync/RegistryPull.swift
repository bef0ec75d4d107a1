import Foundation
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
    var error: String?

    var lines: [String] {
        var lines = refused.map { "lineup-sync: not pulled: \($0.reason)" }
        if let error { lines.append("lineup-sync: \(error)") }
        lines.append(
            "pulled from the lab's registry: \(dogsAdded.count) dogs and \(samplesAdded.count) samples added, "
                + "\(present) already here, \(refused.count) not pulled")
        return lines
    }
}

/// The registry's step on a station: the lab's dogs (those that count as themselves: a dog
/// merged into another counts as that one) and samples the station's log lacks, handed to
/// lineupd, the log's only writer, a few at a time (one request is one line of at most
/// ControlProtocol.maxLineBytes). Programs are not carried: a station reads program files
/// from its own directory, and the store lists the lab's programs by their text's SHA-256.
struct RegistryPull {
    var settings: LabConnection
    var reader: LogReader
    var socket: String
    var perRequest = 20

    func run() async -> PullReport {
        var report = PullReport()
        let dogs: [LabDog]
        let samples: [LabSample]
        do {
            let store = try await LabStore.connect(settings)
            let registry = LabRegistry(store: store)
            do {
                dogs = try await registry.dogs().filter { $0.mergedInto == nil }
                samples = try await registry.samples()
            } catch {
                await store.close()
                throw error
            }
            await store.close()
        } catch {
            report.error = "\(error)"
            return report
        }
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
                wanted.append(
                    RegistrySample(
                        id: sample.id, label: sample.label, kind: kind, diagnosis: sample.diagnosis,
                        source: sample.source, collection: sample.collection, processing: sample.processing,
                        collectedOn: sample.collectedOn, maxUses: sample.maxUses, maxUsesPerDog: sample.maxUsesPerDog))
            }
            for chunk in chunks(wanted) { additions.append(RegistryAddition(samples: chunk)) }
            let client = ControlClient(path: socket)
            for addition in additions {
                let added = try client.send(addition)
                let dogIds = Set(addition.dogs.map(\.id))
                report.dogsAdded += added.added.filter { dogIds.contains($0) }
                report.samplesAdded += added.added.filter { !dogIds.contains($0) }
                report.present += added.present.count
                report.refused += added.refused
            }
        } catch let error as ControlClientError {
            report.error = "lineupd at \(socket): \(error)"
        } catch {
            report.error = "\(error)"
        }
        return report
    }

    func chunks<T>(_ items: [T]) -> [[T]] {
        stride(from: 0, to: items.count, by: perRequest).map { Array(items[$0..<min($0 + perRequest, items.count)]) }
    }
}
