import Figures
import Foundation
import SessionLog
import TrainingEngine

extension ReportHTML {
    // MARK: Faults and health

    static func healthSection(_ data: ReportData) -> String {
        var html = "<section id=\"health\" class=\"health\"><h2>Faults and health</h2>"
        let allClicks = ClickSpread(onsetNs: data.sessions.flatMap(\.clickOnsetNs))
        if let c = allClicks {
            var a = DataAttributes()
            a.add("clicks", c.n)
            a.add("p50-ms", c.p50)
            a.add("p99-ms", c.p99)
            a.add("worst-ms", c.worst)
            html += """
                <p class="click-summary"\(a.text)>Click onset latency over all \(c.n) clicks: median \
                \(String(format: "%.2f", c.p50)) ms, 99th percentile \(String(format: "%.2f", c.p99)) ms, worst \
                \(String(format: "%.2f", c.worst)) ms.</p>
                """
        } else {
            html += "<p class=\"click-summary\" data-clicks=\"0\">No clicks with a measured onset.</p>"
        }
        html += "<table class=\"faults\"><thead><tr><th>fault events</th><th>count</th></tr></thead><tbody>"
        if data.faults.isEmpty {
            html += "<tr class=\"fault\" data-fault=\"none\" data-count=\"0\"><td>none logged</td><td>0</td></tr>"
        }
        for (name, n) in data.faults.sorted(by: { $0.key < $1.key }) {
            html +=
                "<tr class=\"fault\" data-fault=\"\(escape(name))\" data-count=\"\(n)\"><td>\(escape(name))</td><td>\(n)</td></tr>"
        }
        if data.faultsOutsideSessions > 0 {
            html += "<tr><td colspan=\"2\">(\(data.faultsOutsideSessions) of them outside any session)</td></tr>"
        }
        html += "</tbody></table>"
        var endings: [String: Int] = [:]
        for s in data.sessions { endings[s.endedHow ?? "running", default: 0] += 1 }
        html += "<table class=\"endings\"><thead><tr><th>how sessions ended</th><th>count</th></tr></thead><tbody>"
        for how in ["ended", "stopped", "interrupted", "unknown", "running"] {
            let n = endings[how] ?? 0
            html +=
                "<tr class=\"ending\" data-ended-how=\"\(how)\" data-count=\"\(n)\"><td>\(how)</td><td>\(n)</td></tr>"
        }
        html += "</tbody></table>"
        let interrupted = data.sessions.filter { $0.endedHow == "interrupted" }
        if !interrupted.isEmpty {
            html +=
                "<p>Interrupted (a crash, a kill or a power cut): "
                + interrupted.map {
                    "\(escape($0.dog)) \(escape(String($0.id.prefix(8)))) (\(escape(day($0.started))))"
                }
                .joined(separator: ", ") + ".</p>"
        }
        return html + """
            <p class="help">Fault events are what the station logged as it ran: <code>log-events-dropped</code> \
            (the log's queue was full), <code>click-failed</code> (the click could not be played). Edges dropped \
            by the kernel are shown live by <code>lineupctl status</code> and are not in the log.</p></section>

            """
    }
}
