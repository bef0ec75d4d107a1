import Foundation
import Glibc
import StationControl
import TrainingEngine

/// The trial lines on stdout (the terminal, or the journal under systemd) and to watchers; in a
/// double-blind session withheld until it is over.
extension LogFeeder {
    func printLine(_ end: TrialEnd, layout: TrialLayout) {
        let total = settings.firstTrial + settings.layouts.count
        let width = String(total).count
        let number = String(settings.firstTrial + end.trial + 1)
        let head = "trial \(String(repeating: " ", count: max(0, width - number.count)))\(number)/\(total)"
        let layoutText = layout.stations.enumerated().map { "\(name($0.offset)):\($0.element.kind.rawValue)" }
            .joined(separator: " ")
        let search =
            visits.isEmpty
            ? "no station visited"
            : visits.map { "\(name($0.station)) \($0.indicated ? "held" : "sniff")" }.joined(separator: ", ")
        let indication = end.firstStation >= 0 ? name(end.firstStation) : "none"
        // Each click names where it was given and who asked for it: after a false alert a
        // step may let the dog go on and be clicked at the target (`after_false_alert`), and
        // a trainer may press the clicker in any trial.
        let clickText =
            roundClicks.isEmpty
            ? "no click"
            : roundClicks.map { c in
                let whose = c.trainer ? "trainer's click" : "click"
                let at = c.station >= 0 ? "at \(name(c.station))" : "at no station"
                let how = c.failed ? "FAILED" : c.latency.map { "\($0 / 1000) µs" } ?? "(no record)"
                return "\(whose) \(at) \(how)"
            }.joined(separator: ", ")
        // The trainer's error presses, where the nose was: one at the target makes a round not
        // correct (a miss with a click at the target), and the line must say why.
        let errorText =
            roundErrors.isEmpty
            ? ""
            : "  "
                + roundErrors.map { "trainer's error at \($0 >= 0 ? name($0) : "no station")" }.joined(separator: ", ")
        let line =
            "\(head)  \(layoutText)  search: \(search)  indication: \(indication)  \(clickText)\(errorText)  \(end.outcome.outcome.rawValue)"
        // A trial's line gives its layout and outcome: the handler's side (watchers, the
        // terminal, the journal) gets it as the one rule says.
        let shown =
            Visibility.shows(.layout, to: .handler, in: settings.blindState)
            && Visibility.shows(.outcome, to: .handler, in: settings.blindState)
        if shown {
            settings.watch?(.trial(line: line))
            if settings.printTrials { printOut(line) }
            return
        }
        // Double-blind: the trial is over, and that is all a handler may learn of it now.
        let blinded = "\(head)  over (double-blind: its stations and outcome are shown when the session ends)"
        settings.watch?(.trial(line: blinded))
        withheldLines.append(line)
        if settings.printTrials { printOut(blinded) }
    }

    func printOut(_ line: String) {
        print(line)
        fflush(nil)  // one line per trial, even into a pipe
    }

    /// Double-blind, once the session is over: each trial's full line, for the terminal, the
    /// journal and watchers.
    func revealLines() {
        guard !withheldLines.isEmpty else { return }
        let head = "the double-blind session is over: its \(withheldLines.count) trial(s) in full"
        settings.watch?(.revealed(line: head))
        if settings.printTrials { printOut(head) }
        for line in withheldLines {
            settings.watch?(.revealed(line: line))
            if settings.printTrials { printOut(line) }
        }
        withheldLines.removeAll()
    }
}
