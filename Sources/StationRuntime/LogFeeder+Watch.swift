import Foundation
import SessionLog
import StationControl
import TrainingEngine

/// The watch lines: one per logged event, for `lineupctl watch`; in a double-blind session
/// without what would tell a handler where the target is.
extension LogFeeder {
    /// `fault`: a fault's name, for watchers (lineup-alerts wakes on it).
    func submit(_ event: LoggedEvent, fault: String? = nil) {
        writer.submit(event)
        guard let watch = settings.watch else { return }
        // Whoever watches is the handler's side (`Visibility`): where the dog's nose went is
        // withheld while a double-blind session runs, a sensor fault's station is not (someone
        // must go and clear it), a cue's words are progress. The log keeps it all. A detail may
        // say whether a hold was at the target or which sample was at the nose.
        let fact: SessionFact =
            event.kind == .fault ? .faultStation : event.kind == .cue ? .progress : .searchEvent
        let shown = Visibility.shows(fact, to: .handler, in: settings.blindState)
        watch(
            .station(
                WatchEvent.StationEvent(
                    kind: WatchEvent.Kind(event.kind), monoNs: event.time.monoNs,
                    station: shown ? event.station.map { boardName($0 - 1) } : nil, value: event.value,
                    durationNs: event.durationNs, onsetLatencyNs: event.click.map { $0.onsetLatencyNs ?? 0 },
                    detail: shown ? event.detail : nil, trial: current >= 0 ? settings.firstTrial + current + 1 : nil,
                    fault: fault)))
    }
}

extension WatchEvent.Kind {
    /// Each of the log's event kinds on the watch stream, by its own name.
    init(_ kind: EventKind) {
        switch kind {
        case .edge: self = .edge
        case .sniff: self = .sniff
        case .indication: self = .indication
        case .click: self = .click
        case .button: self = .button
        case .cue: self = .cue
        case .fault: self = .fault
        case .note: self = .note
        case .feeder: self = .feeder
        }
    }
}
