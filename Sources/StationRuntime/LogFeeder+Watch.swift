import Foundation
import SessionLog
import TrainingEngine

/// The watch lines: one JSON object per logged event, for `lineupctl watch`; in a double-blind
/// session without what would tell a handler where the target is.
extension LogFeeder {
    func submit(_ event: LoggedEvent, watchers extra: [String: String] = [:]) {
        writer.submit(event)
        guard let watch = settings.watch else { return }
        var fields = extra
        fields["kind"] = event.kind.rawValue
        fields["mono_ns"] = "\(event.time.monoNs)"
        // Whoever watches is the handler's side (`Visibility`): where the dog's nose went is
        // withheld while a double-blind session runs, a sensor fault's station is not (someone
        // must go and clear it), a cue's words are progress. The log keeps it all.
        let fact: SessionFact =
            event.kind == .fault ? .faultStation : event.kind == .cue ? .progress : .searchEvent
        let shown = Visibility.shows(fact, to: .handler, in: settings.blindState)
        if let station = event.station, shown {
            fields["station"] = boardName(station - 1)
        }
        if let value = event.value { fields["value"] = "\(value)" }
        if let d = event.durationNs { fields["duration_ns"] = "\(d)" }
        if let c = event.click { fields["onset_latency_ns"] = "\(c.onsetLatencyNs ?? 0)" }
        // A detail may say whether a hold was at the target or which sample was at the nose.
        if let detail = event.detail, shown {
            fields["detail"] = detail
        }
        if current >= 0 { fields["trial"] = "\(settings.firstTrial + current + 1)" }
        watch(jsonObject(fields))
    }
}

/// A JSON object of string values, for the `detail` column and the watch lines: keys in the
/// order of their UTF-8 bytes, text escaped as JSONSerialization escapes it (`/` too).
///
/// Written here, not by JSONSerialization: its `.sortedKeys` compares keys with the locale's
/// collator, which opens ICU's collation data at the daemon's first session and keeps it
/// resident (and locked, `mlockall`) for good: `lineup-bench click --clicks 1 --storm 0` peaked
/// 2.2 MB lower without it (debug build, 47.6 → 45.4 MB). The keys are the station's own
/// snake_case names, for which byte order is the order JSONSerialization gave
/// (`JSONObjectTests`).
public func jsonObject(_ fields: [String: String]) -> String {
    var out = "{"
    for (index, key) in fields.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }).enumerated() {
        if index > 0 { out += "," }
        appendJSONString(key, to: &out)
        out += ":"
        appendJSONString(fields[key] ?? "", to: &out)
    }
    return out + "}"
}

private func appendJSONString(_ text: String, to out: inout String) {
    out += "\""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "/": out += "\\/"
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        case "\u{8}": out += "\\b"
        case "\u{C}": out += "\\f"
        case _ where scalar.value < 0x20:
            let hex = String(scalar.value, radix: 16)
            out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
        default: out.unicodeScalars.append(scalar)
        }
    }
    out += "\""
}
