import Figures
import Foundation

// The threshold section (issue 38): for each session whose targets are dilutions, the
// staircase track (the target's dilution trial by trial, finds and misses marked) and the
// psychometric fit with the data per dilution. Drawn from `ReportData.thresholds`, counted and
// fitted by `ThresholdCounter` as `stats --threshold` counts them; docs/session-log.md, "The
// report", says what each plot shows.

extension ReportHTML {
    static func thresholdsSection(_ data: ReportData) -> String {
        guard !data.thresholds.isEmpty else { return "" }
        var html = """
            <section id="thresholds" class="thresholds"><h2>How little the dog can smell</h2>
            <p class="help">Sessions whose targets are dilutions of a stock: the target's dilution trial by trial, and \
            the psychometric fit (logistic, guess rate 1 / stations, lapse fitted within 0 to 0.06) with its threshold \
            and 95 % profile-likelihood interval, as <code>lineupctl stats --threshold</code> gives them \
            (docs/figures.md, <em>How little the dog can smell</em>). A ringed trial is one where the staircase \
            turned (a reversal, as the station logged it); the reversal estimate is the geometric mean of each \
            staircase's last \(ThresholdRow.reversalsAveraged) reversals.</p>
            """
        for row in data.thresholds {
            var a = DataAttributes()
            a.add("dog", row.dog)
            a.add("session", row.sessionId)
            a.add("stock", row.stock)
            a.add("scale", row.scale)
            a.add("trials", row.trials)
            a.add("found", row.found)
            a.add("conditions", row.conditions)
            let when = String((row.sessionStarted ?? "").prefix(16)).replacingOccurrences(of: "T", with: " ")
            html += "<div class=\"threshold\"\(a.text)><h3>\(escape(row.dog)) · \(escape(when)) · stock "
            html += "\(escape(row.stock))\(row.conditions.map { " · " + escape($0) } ?? "")</h3>"
            html += "<figure>\(trackChart(row))<figcaption>The target's dilution in each trial, in the order they ran "
            html += "(concentration as \(escape(row.scale))): filled, the dog found it; open, it did not; ringed, "
            html += "a reversal. Reversal estimate: "
            if let r = row.reversalEstimate {
                html +=
                    "<span class=\"reversal-estimate\" data-estimate=\"\(r.estimate)\">\(number(r.estimate))</span> "
                html += "(the geometric mean of the last \(r.last) reversals).</figcaption>"
            } else {
                html += "\(escape(row.reversalNotComputed ?? "-")).</figcaption>"
            }
            html += "</figure><figure>\(curveChart(row))<figcaption>"
            if let fit = row.fit {
                html += "Found per dilution (the circle's area is its trials) and the fitted curve: threshold "
                html += "\(number(fit.threshold)), 95 % interval \(fit.lowerOpen ? "below " : "")\(number(fit.lower)) "
                html += "to \(fit.upperOpen ? "above " : "")\(number(fit.upper)) (shaded), guess rate "
                html +=
                    "\(String(format: "%.3f", fit.guessRate)) (dashed), lapse \(String(format: "%.3f", fit.lapseRate))."
            } else {
                html += "Found per dilution; not fitted: \(escape(row.notFitted ?? "-"))."
            }
            html += "</figcaption></figure></div>"
        }
        return html + "</section>\n"
    }

    static func number(_ value: Double) -> String { String(format: "%.3g", value) }

    /// The log10 range the two plots share: the dilutions', widened by a quarter decade.
    static func log10Range(_ row: ThresholdRow) -> (low: Double, high: Double)? {
        let xs = row.dilutions.compactMap(\.concentration).map { log10($0) }
        guard let low = xs.min(), let high = xs.max() else { return nil }
        return (low - 0.25, high + 0.25)
    }

    static func trackChart(_ row: ThresholdRow) -> String {
        let track = row.track ?? []
        let (width, height, left, top, plotWidth, plotHeight) = (780.0, 220.0, 70.0, 12.0, 690.0, 168.0)
        var s = """
            <svg class="chart threshold-track" role="img" viewBox="0 0 780 220" width="780" height="220" \
            xmlns="http://www.w3.org/2000/svg"><title>\(escape(row.dog)): the target's dilution trial by trial</title>
            """
        guard let range = log10Range(row) else { return s + "</svg>" }
        func x(_ i: Int) -> Double {
            track.count <= 1 ? left + plotWidth / 2 : left + 8 + Double(i) * (plotWidth - 16) / Double(track.count - 1)
        }
        func y(_ c: Double) -> Double { top + plotHeight * (1 - (log10(c) - range.low) / (range.high - range.low)) }
        for c in Set(row.dilutions.compactMap(\.concentration)).sorted() {
            s += "<line class=\"grid\" x1=\"\(px(left))\" x2=\"\(px(left + plotWidth))\" y1=\"\(px(y(c)))\" "
            s += "y2=\"\(px(y(c)))\"/><text class=\"tick\" x=\"\(px(left - 6))\" y=\"\(px(y(c) + 4))\" "
            s += "text-anchor=\"end\">\(escape(number(c)))</text>"
        }
        s +=
            "<line class=\"axis\" x1=\"\(px(left))\" x2=\"\(px(left))\" y1=\"\(px(top))\" y2=\"\(px(top + plotHeight))\"/>"
        s += "<line class=\"axis\" x1=\"\(px(left))\" x2=\"\(px(left + plotWidth))\" y1=\"\(px(top + plotHeight))\" "
        s += "y2=\"\(px(top + plotHeight))\"/>"
        s += "<text class=\"axis-label\" x=\"\(px(left + plotWidth / 2))\" y=\"\(px(height - 8))\" "
        s += "text-anchor=\"middle\">trial (in order)</text>"
        let points = track.enumerated().compactMap { i, p in p.concentration.map { (x(i), y($0)) } }
        if points.count > 1 {
            let d = points.enumerated().map { "\($0 == 0 ? "M" : "L")\(px($1.0)) \(px($1.1))" }.joined()
            s += "<path d=\"\(d)\" fill=\"none\" stroke=\"#999\" stroke-width=\"1\"/>"
        }
        for (i, point) in track.enumerated() {
            guard let c = point.concentration else { continue }
            var a = DataAttributes()
            a.add("trial", i + 1)
            a.add("sample", point.sample)
            a.add("concentration", c)
            a.add("found", point.found ? "1" : "0")
            if point.reversal { a.add("reversal", "1") }
            let fill = point.found ? Palette.bluishGreen : "#ffffff"
            s += "<g class=\"trial\"\(a.text)><title>trial \(i + 1): \(escape(point.sample)), "
            s += "\(point.found ? "found" : "not found")\(point.reversal ? ", a reversal" : "")</title>"
            if point.reversal {
                s += "<circle class=\"reversal\" cx=\"\(px(x(i)))\" cy=\"\(px(y(c)))\" r=\"7.5\" fill=\"none\" "
                s += "stroke=\"\(Palette.black)\" stroke-width=\"1.2\"/>"
            }
            s += "<circle cx=\"\(px(x(i)))\" cy=\"\(px(y(c)))\" r=\"4\" "
            s += "fill=\"\(fill)\" stroke=\"\(point.found ? Palette.bluishGreen : Palette.vermillion)\" "
            s += "stroke-width=\"1.5\"/></g>"
        }
        return s + "</svg>"
    }

    static func curveChart(_ row: ThresholdRow) -> String {
        let (height, left, top, plotWidth, plotHeight) = (240.0, 70.0, 12.0, 690.0, 188.0)
        var s = """
            <svg class="chart threshold-curve" role="img" viewBox="0 0 780 240" width="780" height="240" \
            xmlns="http://www.w3.org/2000/svg"><title>\(escape(row.dog)): found per dilution and the fitted curve</title>
            """
        guard let range = log10Range(row) else { return s + "</svg>" }
        func x(_ log10c: Double) -> Double {
            left + plotWidth * (min(max(log10c, range.low), range.high) - range.low) / (range.high - range.low)
        }
        func y(_ p: Double) -> Double { top + plotHeight * (1 - min(max(p, 0), 1)) }
        for t in [0, 0.25, 0.5, 0.75, 1.0] {
            s += "<line class=\"grid\" x1=\"\(px(left))\" x2=\"\(px(left + plotWidth))\" y1=\"\(px(y(t)))\" "
            s += "y2=\"\(px(y(t)))\"/><text class=\"tick\" x=\"\(px(left - 6))\" y=\"\(px(y(t) + 4))\" "
            s += "text-anchor=\"end\">\(Int(t * 100)) %</text>"
        }
        for c in Set(row.dilutions.compactMap(\.concentration)).sorted() {
            s += "<text class=\"tick\" x=\"\(px(x(log10(c))))\" y=\"\(px(top + plotHeight + 16))\" "
            s += "text-anchor=\"middle\">\(escape(number(c)))</text>"
        }
        s += "<line class=\"axis\" x1=\"\(px(left))\" x2=\"\(px(left + plotWidth))\" y1=\"\(px(top + plotHeight))\" "
        s += "y2=\"\(px(top + plotHeight))\"/>"
        s += "<text class=\"axis-label\" x=\"\(px(left + plotWidth / 2))\" y=\"\(px(height - 4))\" "
        s += "text-anchor=\"middle\">concentration (\(escape(row.scale)), log scale)</text>"
        if let fit = row.fit {
            var a = DataAttributes()
            a.add("threshold", fit.threshold)
            a.add("lower", fit.lower)
            a.add("upper", fit.upper)
            a.add("guess-rate", fit.guessRate)
            a.add("lapse-rate", fit.lapseRate)
            let (l, u) = (x(log10(fit.lower)), x(log10(fit.upper)))
            s += "<g class=\"fit\"\(a.text)><rect x=\"\(px(l))\" y=\"\(px(top))\" width=\"\(px(max(0, u - l)))\" "
            s += "height=\"\(px(plotHeight))\" fill=\"\(Palette.skyBlue)\" fill-opacity=\"0.2\"/>"
            s += "<line x1=\"\(px(left))\" x2=\"\(px(left + plotWidth))\" y1=\"\(px(y(fit.guessRate)))\" "
            s += "y2=\"\(px(y(fit.guessRate)))\" stroke=\"#666\" stroke-dasharray=\"4 3\"/>"
            let steps = 80
            let d = (0...steps).map { k -> String in
                let lx = range.low + (range.high - range.low) * Double(k) / Double(steps)
                return "\(k == 0 ? "M" : "L")\(px(x(lx))) \(px(y(fit.chanceFound(at: pow(10, lx)))))"
            }.joined()
            s += "<path d=\"\(d)\" fill=\"none\" stroke=\"\(Palette.blue)\" stroke-width=\"2\"/>"
            let t = x(fit.log10Threshold)
            s += "<line x1=\"\(px(t))\" x2=\"\(px(t))\" y1=\"\(px(top))\" y2=\"\(px(top + plotHeight))\" "
            s += "stroke=\"\(Palette.blue)\" stroke-dasharray=\"2 2\"/></g>"
        }
        let most = Double(row.dilutions.map(\.trials).max() ?? 1)
        for d in row.dilutions {
            guard let c = d.concentration, d.trials > 0 else { continue }
            var a = DataAttributes()
            a.add("sample", d.sample)
            a.add("concentration", c)
            a.add("trials", d.trials)
            a.add("found", d.found)
            let share = Double(d.found) / Double(d.trials)
            s += "<g class=\"dilution\"\(a.text)><title>\(escape(d.sample)): \(d.found) of \(d.trials) found</title>"
            s +=
                "<circle cx=\"\(px(x(log10(c))))\" cy=\"\(px(y(share)))\" r=\"\(px(3 + 5 * (Double(d.trials) / most).squareRoot()))\" "
            s +=
                "fill=\"\(Palette.orange)\" fill-opacity=\"0.8\" stroke=\"\(Palette.black)\" stroke-width=\"0.5\"/></g>"
        }
        return s + "</svg>"
    }
}
