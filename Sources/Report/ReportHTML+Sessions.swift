import Figures
import Foundation
import SessionLog
import TrainingEngine

extension ReportHTML {
    // MARK: Sessions

    static func sessionsSection(_ data: ReportData) -> String {
        var html = "<section id=\"sessions\" class=\"sessions\"><h2>Sessions</h2>"
        let shown = data.sessions.suffix(maxSessionRows)
        if shown.count < data.sessions.count {
            html += """
                <p>The \(shown.count) most recent of \(data.sessions.count) sessions; <code>lineupctl sessions</code> \
                lists them all.</p>
                """
        }
        html += """
            <table class="sessions"><thead><tr><th>started</th><th>dog</th><th>program</th><th>phase / step</th>\
            <th>mode</th><th>station</th><th>trials</th><th>hit</th><th>miss</th><th>FA</th><th>CR</th>\
            <th>aborted</th><th>correct</th><th>sens.</th><th>spec.</th><th>click p99</th><th>faults</th>\
            <th>ended</th><th>notes and suggestions</th></tr></thead><tbody>
            """
        for s in shown {
            let f = s.figures
            let r = f.results
            var a = DataAttributes()
            a.add("session", s.id)
            a.add("program", s.program)
            a.add("step", [s.phase, s.step].compactMap { $0 }.joined(separator: "/"))
            a.add("mode", s.mode.rawValue)
            a.add("station", s.station)
            a.add("station-id", s.stationId)
            a.add("trials", r.trials)
            a.add("hits", r.hits)
            a.add("misses", r.misses)
            a.add("false-alerts", r.falseAlerts)
            a.add("correct-rejections", r.correctRejections)
            a.add("aborted", r.aborted)
            a.add("ended-how", s.endedHow ?? "running")
            let clicks = ClickSpread(onsetNs: s.clickOnsetNs)
            let step = [s.phase, s.step].compactMap { $0 }.joined(separator: " / ")
            let ended =
                (s.endedHow ?? "running") == "interrupted" ? "<strong>INTERRUPTED</strong>" : s.endedHow ?? "running"
            // A lab log's sessions also name the station's identity, as `export` does.
            let station = (s.station ?? "–") + (s.stationId.map { " (\($0.prefix(8)))" } ?? "")
            let notes =
                s.comments.map { "<span class=\"comment\">\(escape($0))</span>" }
                + s.suggestions.map { "<span class=\"suggestion\">suggestion: \(escape($0))</span>" }
            html += """
                <tr class="session"\(a.text)><td class="when">\(escape(String(s.started.prefix(16)).replacingOccurrences(of: "T", with: "\u{00A0}")))</td>\
                <td class="text">\(escape(s.dog))</td><td class="text">\(escape(s.program ?? "–"))</td>\
                <td class="text">\(escape(step.isEmpty ? "–" : step))</td><td>\(escape(s.mode.rawValue))</td>\
                <td class="text">\(escape(station))</td>\
                <td>\(r.trials)</td><td>\(r.hits)</td><td>\(r.misses)</td><td>\(r.falseAlerts)</td>\
                <td>\(r.correctRejections)</td><td>\(r.aborted)</td><td>\(percent(f.trialAccuracy))</td>\
                <td>\(percent(f.sensitivity))</td><td>\(percent(f.specificity))</td>\
                <td>\(clicks.map { String(format: "%.2f\u{00A0}ms", $0.p99) } ?? "–")</td><td>\(s.faults)</td>\
                <td>\(ended)</td><td class="text notes">\(notes.joined(separator: "<br>"))</td></tr>
                """
        }
        return html + "</tbody></table></section>\n"
    }
}
