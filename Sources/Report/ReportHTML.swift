import Figures
import Foundation
import SessionLog
import TrainingEngine

// `lineupctl report`: one self-contained HTML file (inline SVG and CSS, no script, nothing
// fetched), readable offline, printable. It draws what `LogReader.report` counted and
// counts nothing itself; docs/session-log.md, "The report", says what each chart shows.

public enum ReportHTML {
    /// At most this many rows in the sessions table (the most recent): the file stays bounded
    /// on a log of years; `lineupctl sessions` lists them all.
    public static let maxSessionRows = 400

    /// The whole document. `scope` says in words what was chosen (all dogs, a dog, dates).
    public static func render(_ data: ReportData, scope: String) -> String {
        var html = """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>Scent lineup report: \(escape(scope))</title>
            <style>\(css)</style></head><body>
            <header><h1>Scent lineup report</h1>
            <p class="scope" data-trials="\(data.trials)" data-sessions="\(data.sessions.count)" \
            data-dogs="\(data.dogs.count)">\(escape(scope)): \(data.dogs.count) dog(s), \
            \(data.sessions.count) session(s), \(data.trials) trial(s). Made \(escape(data.generated)).</p>
            <p class="help">Every figure is defined in docs/figures.md, <em>What the figures mean</em>, and counted \
            by the same code as <code>lineupctl stats</code>. Shaded bands are 95 % Wilson intervals.</p>
            <nav><ul>
            """
        for dog in data.dogs {
            html += "<li><a href=\"#dog-\(escape(dog.id))\">\(escape(dog.name))</a></li>"
        }
        if !data.thresholds.isEmpty { html += "<li><a href=\"#thresholds\">Thresholds</a></li>" }
        html += """
            <li><a href="#samples">Samples</a></li><li><a href="#health">Faults and health</a></li>\
            <li><a href="#sessions">Sessions</a></li></ul></nav></header>
            """
        if data.sessions.isEmpty {
            html += "<p class=\"empty\">No sessions match. Check the dog, session or dates chosen.</p>"
        }
        for dog in data.dogs { html += dogSection(dog, data) }
        html += thresholdsSection(data)
        html += samplesSection(data)
        html += healthSection(data)
        html += sessionsSection(data)
        return html + "</body></html>\n"
    }

    // MARK: Small things

    static func percent(_ p: Proportion) -> String {
        p.value.map { String(format: "%.0f\u{00A0}%%", $0 * 100) } ?? "–"
    }

    /// Each point's label, its first session's start, distinct from every other point's: the
    /// date alone when that tells them apart, else with the time to the minute, else to the
    /// second; points that still collide (sessions logged in the same second) get their ordinal.
    static func xAxis(_ dog: ReportDog, _ data: ReportData) -> (labels: [String], title: String) {
        let starts = dog.points.map { data.sessions[$0.sessions[0]].started }
        let resolutions: [(cut: (String) -> String, title: String)] = [
            (day, "session (start date)"),
            (
                { String($0.dropFirst(5).prefix(11)).replacingOccurrences(of: "T", with: " ") },
                "session (start, month-day hour:minute)"
            ),
            (
                { String($0.dropFirst(5).prefix(14)).replacingOccurrences(of: "T", with: " ") },
                "session (start, month-day hour:minute:second)"
            ),
        ]
        for (k, resolution) in resolutions.enumerated() {
            let labels = starts.map(resolution.cut)
            if Set(labels).count == labels.count || k == resolutions.count - 1 {
                var seen: [String: Int] = [:]
                for label in labels { seen[label, default: 0] += 1 }
                var ordinal: [String: Int] = [:]
                let distinct = labels.map { label -> String in
                    guard seen[label]! > 1 else { return label }
                    ordinal[label, default: 0] += 1
                    return "\(label) #\(ordinal[label]!)"
                }
                return (distinct, resolution.title)
            }
        }
        return (starts, "session (start)")
    }

    /// `2025-05-01` from an ISO 8601 time.
    static func day(_ iso: String) -> String { String(iso.prefix(10)) }

    /// White to Okabe-Ito blue (#0072B2) at `t` in 0...1.
    static func mix(_ t: Double) -> String {
        let t = min(max(t, 0), 1)
        let r = Int((255 + (0 - 255) * t).rounded())
        let g = Int((255 + (0x72 - 255) * t).rounded())
        let b = Int((255 + (0xB2 - 255) * t).rounded())
        return String(format: "#%02x%02x%02x", r, g, b)
    }

    static let css = """
        body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:#111;\
        max-width:1000px;margin:0 auto;padding:16px 20px}
        h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;border-bottom:2px solid #0072B2;margin:28px 0 8px;\
        padding-bottom:2px}h3{font-size:15px;margin:14px 0 4px}
        nav ul{list-style:none;padding:0;margin:6px 0;display:flex;flex-wrap:wrap;gap:4px 14px}
        figure{margin:0 0 14px}figcaption,.help{font-size:12px;color:#333;max-width:780px}
        svg.chart{max-width:100%;height:auto}
        svg text{font:11px system-ui,-apple-system,"DejaVu Sans",sans-serif}
        svg .axis-label{font-size:12px}svg .note{font-size:10px}svg .legend{font-size:11px}
        .grid{stroke:#e3e3e3}.axis{stroke:#444}
        table{border-collapse:collapse;font-size:12px;margin:6px 0}
        th,td{border-bottom:1px solid #ddd;padding:2px 6px;text-align:left;vertical-align:top}
        td.when{white-space:nowrap}table.sessions{font-size:11px}table.sessions td,table.sessions th{padding:2px 4px}
        th{background:#f3f3f3;white-space:normal}td.bar{padding:0 6px}
        tr.flagged td{font-weight:bold}tr.flagged td:last-child{color:#D55E00}
        .empty{color:#555;font-style:italic}h2 small.id{font-weight:normal;color:#666;font-size:12px}
        @page{size:A4;margin:12mm}
        @media print{body{max-width:none;padding:0;font-size:10pt}nav{display:none}\
        section.dog+section.dog{break-before:page}figure,tr{break-inside:avoid}a{color:inherit;text-decoration:none}\
        h2{break-after:avoid}}
        """
}
