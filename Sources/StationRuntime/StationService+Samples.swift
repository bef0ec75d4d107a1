import Figures
import Foundation
import SessionLog
import StationControl
import TrainingEngine

// The samples a session is laid out from, with their limits and the dog's exposure to each.
extension StationService {
    /// The samples asked for, and each one's label by id. Their uses count the lab's other
    /// stations too, as lineup-sync last pulled them (in all, and with `dog`, its id here).
    func resolveSamples(_ wanted: [String], exposure: [String: Int] = [:], dog: String? = nil) throws(ControlRefusal)
        -> ([Sample], [String: String])
    {
        guard !wanted.isEmpty else { return ([], [:]) }
        let all: [SampleSummary]
        let elsewhere: [String: LabUsesElsewhere]
        let dogElsewhere: [String: LabUsesElsewhere]
        do {
            // lineupd's own readers: a connection opened per session start grew its memory.
            let reader = log.reader
            all = try reader.samples()
            elsewhere = try reader.labUsesElsewhere()
            dogElsewhere = try dog.map { try reader.labUsesElsewhere(dog: $0) } ?? [:]
        } catch {
            throw ControlRefusal(.failed, "cannot read the samples: \(error)")
        }
        var out: [Sample] = []
        var labels: [String: String] = [:]
        for text in wanted {
            let matches = all.filter { $0.label == text || $0.id.hasPrefix(text.lowercased()) }
            guard matches.count == 1, let s = matches.first else {
                throw ControlRefusal(
                    .unknown,
                    matches.isEmpty ? "no sample \"\(text)\" (lineupctl samples)" : "\"\(text)\" names several samples")
            }
            var sample = Self.layoutSample(s, exposure: exposure)
            sample.usesElsewhere = elsewhere[s.id].map(Self.usesElsewhere)
            sample.dogUsesElsewhere = dogElsewhere[s.id].map(Self.usesElsewhere)
            out.append(sample)
            labels[s.id] = s.label
        }
        return (out, labels)
    }

    /// The lab's part of a sample's uses for the layout's message: "as of" to the minute, in
    /// the station's time zone as the log's times are read.
    static func usesElsewhere(_ uses: LabUsesElsewhere) -> UsesElsewhere {
        var iso = ISOTimeFormatter()
        let time = iso.string(wallNs: uses.asOfWallNs)
        return UsesElsewhere(uses: uses.uses, asOf: String(time.prefix(16)).replacingOccurrences(of: "T", with: " "))
    }

    /// A registered sample as the layout generator sees it: its limits, its uses, and this
    /// dog's exposure to it (`LogReader.exposure`).
    static func layoutSample(_ s: SampleSummary, exposure: [String: Int]) -> Sample {
        Sample(
            id: s.id, kind: s.kind, usageLimit: s.maxUses, usageCount: s.uses, usageLimitPerDog: s.maxUsesPerDog,
            dogUsageCount: exposure[s.id] ?? 0, label: s.label)
    }
}
