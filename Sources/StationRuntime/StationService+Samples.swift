import SessionLog
import StationControl
import TrainingEngine

// The samples a session is laid out from, with their limits and the dog's exposure to each.
extension StationService {
    /// The samples asked for, and each one's label by id.
    func resolveSamples(_ wanted: [String], exposure: [String: Int] = [:]) throws(ControlRefusal) -> (
        [Sample], [String: String]
    ) {
        guard !wanted.isEmpty else { return ([], [:]) }
        let all: [SampleSummary]
        do {
            all = try log.reader.samples()
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
            out.append(Self.layoutSample(s, exposure: exposure))
            labels[s.id] = s.label
        }
        return (out, labels)
    }

    /// A registered sample as the layout generator sees it: its limits, its uses, and this
    /// dog's exposure to it (`LogReader.exposure`).
    static func layoutSample(_ s: SampleSummary, exposure: [String: Int]) -> Sample {
        Sample(
            id: s.id, kind: s.kind, usageLimit: s.maxUses, usageCount: s.uses, usageLimitPerDog: s.maxUsesPerDog,
            dogUsageCount: exposure[s.id] ?? 0, label: s.label)
    }
}
