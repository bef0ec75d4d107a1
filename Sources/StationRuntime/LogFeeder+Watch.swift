import Foundation
import SessionLog

/// The watch lines: one JSON object per logged event, for `lineupctl watch`; in a double-blind
/// session without what would tell a handler where the target is.
extension LogFeeder {
    func submit(_ event: LoggedEvent, watchers extra: [String: String] = [:]) {
        writer.submit(event)
        guard let watch = settings.watch else { return }
        var fields = extra
        fields["kind"] = event.kind.rawValue
        fields["mono_ns"] = "\(event.time.monoNs)"
        // Double-blind: where the dog's nose went (edges, sniffs, indications, the click's
        // station) tells a watching handler where the target is or is not; the log keeps it.
        // A sensor fault keeps its station: someone must go and clear it.
        if let station = event.station, !settings.blind || event.kind == .fault {
            fields["station"] = boardName(station - 1)
        }
        if let value = event.value { fields["value"] = "\(value)" }
        if let d = event.durationNs { fields["duration_ns"] = "\(d)" }
        if let c = event.click { fields["onset_latency_ns"] = "\(c.onsetLatencyNs ?? 0)" }
        // A detail may say whether a hold was at the target or which sample was at the nose:
        // blind watchers get only a cue's and a fault's.
        if let detail = event.detail, !settings.blind || event.kind == .cue || event.kind == .fault {
            fields["detail"] = detail
        }
        if current >= 0 { fields["trial"] = "\(settings.firstTrial + current + 1)" }
        watch(jsonObject(fields))
    }
}

/// A JSON object of string values, for the `detail` column.
public func jsonObject(_ fields: [String: String]) -> String {
    let data = (try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys])) ?? Data("{}".utf8)
    return String(decoding: data, as: UTF8.self)
}
