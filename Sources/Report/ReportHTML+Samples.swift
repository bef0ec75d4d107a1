import Figures
import Foundation
import SessionLog
import TrainingEngine

extension ReportHTML {
    // MARK: Samples

    static func samplesSection(_ data: ReportData) -> String {
        var html = """
            <section id="samples" class="samples"><h2>Samples</h2>
            <p>Each sample over every dog and session in this report. Uses: trials it stood in. Target samples: hit \
            rate (indicated / presented); control and distractor samples: false-alert rate (indicated / examined, \
            that is 1 − specificity). <strong>Flagged</strong> (the project's rule, docs/figures.md, "A flagged \
            sample"): at least \(SampleFlag.minimumPresentations) counted presentations and \
            \(SampleFlag.minimumIndications) of them indicated, Fisher's exact test (one-sided) of its count \
            against the pooled count of every other sample of its kind (targets with targets; controls with \
            controls and distractors) below \(SampleFlag.level), and odds of indication at least \
            \(Int(SampleFlag.oddsRatio)) times theirs. A flagged control is one the dogs find: contaminated or \
            confounded.</p>
            """
        guard !data.samples.isEmpty else { return html + "<p class=\"empty\">No samples with ids.</p></section>" }
        html += """
            <table class="samples"><thead><tr><th>sample</th><th>kind</th><th>uses</th><th>rate</th>\
            <th>95 % interval</th><th>others</th><th>Fisher p</th><th class="bar">0 – 100 %</th><th>flag</th></tr>\
            </thead><tbody>
            """
        for sample in data.samples {
            var a = DataAttributes()
            a.add("sample", sample.label)
            a.add("kind", sample.kind.rawValue)
            a.add("uses", sample.tally.results.trials)
            if let r = sample.rate {
                addProportion(&a, "rate", r)
            }
            a.add("rest-rate", sample.restRate)
            if let flag = sample.flag {
                a.add("rest-successes", flag.others.successes)
                a.add("rest-trials", flag.others.trials)
                a.add("flag-p", flag.p)
            }
            a.add("flagged", sample.flagged ? "true" : "false")
            let what = sample.kind == .target ? "hit" : (sample.kind == .blank ? "" : "false alert")
            html += "<tr class=\"sample\(sample.flagged ? " flagged" : "")\"\(a.text)>"
            html +=
                "<td>\(escape(sample.label))</td><td>\(sample.kind.rawValue)</td><td>\(sample.tally.results.trials)</td>"
            if let r = sample.rate, let v = r.value, let lo = r.lower, let hi = r.upper {
                html += "<td>\(String(format: "%.1f", v * 100)) % \(what) (\(r.successes)/\(r.trials))</td>"
                html += "<td>\(String(format: "%.1f–%.1f", lo * 100, hi * 100))</td>"
                html +=
                    "<td>\(sample.flag.flatMap { f in f.others.value.map { String(format: "%.1f %% (%d/%d)", $0 * 100, f.others.successes, f.others.trials) } } ?? "–")</td>"
                html += "<td>\(pValue(sample.flag?.p))</td>"
                html += "<td class=\"bar\">\(sampleBar(v, lo, hi, sample.restRate, flagged: sample.flagged))</td>"
            } else {
                html += "<td>–</td><td>–</td><td>–</td><td>–</td><td class=\"bar\"></td>"
            }
            html += "<td>\(sample.flagged ? "⚑ flagged" : "")</td></tr>"
        }
        return html + "</tbody></table></section>\n"
    }

    /// The rate as a dot on its interval, with the other samples' pooled rate as a tick.
    static func sampleBar(_ v: Double, _ lo: Double, _ hi: Double, _ rest: Double?, flagged: Bool) -> String {
        let w = 150.0
        func x(_ p: Double) -> Double { 4 + p * (w - 8) }
        let colour = flagged ? Palette.vermillion : Palette.blue
        var s =
            "<svg class=\"rate\" viewBox=\"0 0 \(Int(w)) 16\" width=\"\(Int(w))\" height=\"16\" xmlns=\"http://www.w3.org/2000/svg\">"
        s += "<line x1=\"\(px(x(0)))\" x2=\"\(px(x(1)))\" y1=\"8\" y2=\"8\" stroke=\"#ddd\"/>"
        if let rest {
            s +=
                "<line x1=\"\(px(x(rest)))\" x2=\"\(px(x(rest)))\" y1=\"2\" y2=\"14\" stroke=\"#000\" stroke-dasharray=\"2 2\"/>"
        }
        s +=
            "<line x1=\"\(px(x(lo)))\" x2=\"\(px(x(hi)))\" y1=\"8\" y2=\"8\" stroke=\"\(colour)\" stroke-width=\"4\" stroke-opacity=\"0.35\"/>"
        s += Marker.circle.svg(x: x(v), y: 8, colour: colour)
        return s + "</svg>"
    }
}
