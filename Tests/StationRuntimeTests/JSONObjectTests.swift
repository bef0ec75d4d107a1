import Foundation
import StationControl
import Testing

@testable import StationRuntime

/// `jsonObject` (the `detail` column's and the watch lines' JSON) writes what JSONSerialization
/// with `.sortedKeys` wrote before it replaced it: the same text, byte for byte, for the
/// station's keys and for values holding every character JSON escapes, so logs written before
/// and after read the same (the readers also match `detail` with LIKE).
@Suite struct JSONObjectTests {
    /// The key sets the station writes (StationRuntime's call sites), and a few more.
    static let keySets: [[String]] = [
        ["kind", "mono_ns", "station", "value", "duration_ns", "onset_latency_ns", "detail", "trial"],
        [
            "criterion", "debounce_ns", "dog", "dog_false_alert_rate", "dog_familiar_sensitivity",
            "dog_memorise_after", "dog_sensitivity", "duration_s", "hold_ns", "inter_trial_ns", "phase", "samples",
            "search_timeout_ns", "seed", "simulated", "speed", "stations", "step", "trials", "unlabelled",
            "unused_stations",
        ],
        ["ends_mono_ns", "fault", "kind", "line", "ready", "seconds_left", "session", "sha256", "trial", "why"],
        ["kind"], [],
    ]

    static let values = [
        "", "plain", "a/b", "quote \" and backslash \\", "line\nfeed\rreturn\ttab", "\u{8}\u{C}\u{0}\u{1F}\u{7F}",
        "Rex — 'détecté' 🐕", "{\"nested\":\"json\"}", "T-7,C-1",
    ]

    private func reference(_ fields: [String: String]) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys]), as: UTF8.self)
    }

    @Test func theSameTextAsJSONSerializationWithSortedKeys() throws {
        for (setIndex, keys) in Self.keySets.enumerated() {
            for (valueIndex, _) in Self.values.enumerated() {
                var fields: [String: String] = [:]
                for (k, key) in keys.enumerated() { fields[key] = Self.values[(valueIndex + k) % Self.values.count] }
                let ours = jsonObject(fields)
                #expect(ours == (try reference(fields)), "key set \(setIndex), values from \(valueIndex)")
                let back = try JSONSerialization.jsonObject(with: Data(ours.utf8)) as? [String: String]
                #expect(back == fields)
            }
        }
    }
}
