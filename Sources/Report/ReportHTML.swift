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
        html += """
            <li><a href="#samples">Samples</a></li><li><a href="#health">Faults and health</a></li>\
            <li><a href="#sessions">Sessions</a></li></ul></nav></header>
            """
        if data.sessions.isEmpty {
            html += "<p class=\"empty\">No sessions match. Check the dog, session or dates chosen.</p>"
        }
        for dog in data.dogs { html += dogSection(dog, data) }
        html += samplesSection(data)
        html += healthSection(data)
        html += sessionsSection(data)
        return html + "</body></html>\n"
    }

    // MARK: Per dog

    static func dogSection(_ dog: ReportDog, _ data: ReportData) -> String {
        let first = data.sessions[dog.sessions[0]]
        let last = data.sessions[dog.sessions[dog.sessions.count - 1]]
        var html = """
            <section class="dog" id="dog-\(escape(dog.id))" data-dog="\(escape(dog.id))" \
            data-name="\(escape(dog.name))" data-sessions="\(dog.sessions.count)">
            <h2>\(escape(dog.name)) <small class="id">\(escape(String(dog.id.prefix(8))))</small></h2>
            <p>\(dog.sessions.count) session(s), \(escape(day(first.started))) to \(escape(day(last.started))).
            """
        if dog.sessionsPerPoint > 1 {
            html += """
                 Each point of the charts pools \(dog.sessionsPerPoint) consecutive sessions (at most \
                \(dog.points.count) points per chart); its figures are those of the pooled trials.
                """
        }
        html += "</p>"
        html += learningCurve(dog, data)
        html += latencyChart(dog, data)
        html += positionBias(dog)
        html += clickChart(dog, data)
        return html + "</section>\n"
    }

    /// Data attributes naming a point's sessions.
    static func pointAttributes(_ point: CurvePoint, _ data: ReportData) -> DataAttributes {
        var a = DataAttributes()
        let first = data.sessions[point.sessions[0]]
        if point.sessions.count == 1 {
            a.add("session", first.id)
        } else {
            a.add("sessions", point.sessions.count)
            a.add("first-session", first.id)
            a.add("last-session", data.sessions[point.sessions[point.sessions.count - 1]].id)
        }
        a.add("started", first.started)
        return a
    }

    static func addProportion(_ a: inout DataAttributes, _ name: String, _ p: Proportion) {
        a.add(name, p.value)
        a.add("\(name)-successes", p.successes)
        a.add("\(name)-trials", p.trials)
        a.add("\(name)-lower", p.lower)
        a.add("\(name)-upper", p.upper)
    }

    static func band(_ p: Proportion) -> (Double, Double)? {
        guard let lower = p.lower, let upper = p.upper else { return nil }
        return (lower, upper)
    }

    static func learningCurve(_ dog: ReportDog, _ data: ReportData) -> String {
        let points = dog.points
        let axis = xAxis(dog, data)
        // What a point's criterion figures are: those of its last session, at its end.
        let lastOf = points.map { data.sessions[$0.sessions[$0.sessions.count - 1]] }
        var attributes: [DataAttributes] = []
        for (point, last) in zip(points, lastOf) {
            var a = pointAttributes(point, data)
            let f = point.figures
            let first = data.sessions[point.sessions[0]]
            a.add("label", axis.labels[attributes.count])
            a.add("group", dog.groups[point.group])
            a.add("program", first.program)
            a.add("step", [first.phase, first.step].compactMap { $0 }.joined(separator: "/"))
            a.add("mode", first.mode.rawValue)
            a.add("trials", f.results.trials)
            a.add("scored", f.results.scored)
            addProportion(&a, "trial-accuracy", f.trialAccuracy)
            addProportion(&a, "sensitivity", f.sensitivity)
            addProportion(&a, "specificity", f.specificity)
            if let rolling = last.rollingAccuracy, let window = last.rollingWindow {
                a.add("rolling-accuracy", rolling)
                a.add("rolling-window", window)
            }
            if let progress = last.countProgress {
                a.add("count-correct", last.countCorrect)
                a.add("count-trials", last.countTrials)
                a.add("count-progress", progress)
            }
            attributes.append(a)
        }
        var series = [
            Series(
                name: "trial accuracy", className: "trial-accuracy", colour: Palette.blue, dash: nil,
                marker: .circle, values: points.map { $0.figures.trialAccuracy.value },
                band: points.map { band($0.figures.trialAccuracy) }),
            Series(
                name: "sensitivity", className: "sensitivity", colour: Palette.vermillion, dash: "6 3",
                marker: .square, values: points.map { $0.figures.sensitivity.value },
                band: points.map { band($0.figures.sensitivity) }),
            Series(
                name: "specificity", className: "specificity", colour: Palette.bluishGreen, dash: "2 3",
                marker: .triangle, values: points.map { $0.figures.specificity.value },
                band: points.map { band($0.figures.specificity) }),
            // What an accuracy criterion looks at: the accuracy over its window of the step's
            // trials, at the end of the point's last session.
            Series(
                name: "criterion window", className: "rolling-accuracy", colour: Palette.reddishPurple,
                dash: "1 2", marker: .circle, values: lastOf.map(\.rollingAccuracy), band: nil),
        ]
        // A count criterion is no accuracy: how far along it the dog is (100 % = met).
        if lastOf.contains(where: { $0.countProgress != nil }) {
            series.append(
                Series(
                    name: "count criterion met", className: "count-progress", colour: Palette.orange, dash: "4 2",
                    marker: .diamond, values: lastOf.map(\.countProgress), band: nil))
        }
        var chart = SeriesChart(
            className: "learning-curve", title: "\(dog.name): learning curve", xLabel: axis.title,
            yLabel: "per cent", yMax: 1, yTicks: [0, 0.25, 0.5, 0.75, 1],
            yTickLabel: { "\(Int(($0 * 100).rounded())) %" }, xLabels: axis.labels, series: series,
            pointData: attributes, bandNote: "Wilson 95 %", groups: points.map(\.group), groupNames: dog.groups)
        // The criterion over each run of points of one line: each level it asks for, one line a level.
        var notes = Set<String>()
        var start = 0
        while start < points.count {
            let session = data.sessions[points[start].sessions[0]]
            var end = start
            while end + 1 < points.count {
                let next = data.sessions[points[end + 1].sessions[0]]
                guard points[end + 1].group == points[start].group, next.criterion == session.criterion else { break }
                end += 1
            }
            if let criterion = session.criterion {
                var byLevel: [(level: Double, labels: [String])] = []
                for (level, label) in levels(criterion) {
                    if let k = byLevel.firstIndex(where: { $0.level == level }) {
                        byLevel[k].labels.append(label)
                    } else {
                        byLevel.append((level, [label]))
                    }
                }
                for (level, labels) in byLevel {
                    var a = DataAttributes()
                    a.add("level", level)
                    a.add("phase", session.phase)
                    a.add("step", session.step)
                    a.add("mode", session.mode.rawValue)
                    a.add("criterion", labels.joined(separator: " · "))
                    chart.lines.append(
                        ReferenceLine(y: level, from: start, to: end, label: labels.joined(separator: " · "), data: a))
                }
            } else {
                notes.insert(session.criterionNote ?? "unknown")
            }
            start = end + 1
        }
        // Milestones at the point holding the session that earned them.
        var unplaced: [ReportMilestone] = []
        for milestone in dog.milestones {
            let at = milestone.sessionId.flatMap { id in
                points.firstIndex { $0.sessions.contains { data.sessions[$0].id == id } }
            }
            guard let at else {
                unplaced.append(milestone)
                continue
            }
            var a = DataAttributes()
            a.add("phase", milestone.phase)
            a.add("step", milestone.step)
            a.add("time", milestone.time)
            a.add("criterion", milestone.criterion)
            chart.marks.append(PointMark(at: at, label: "★ " + milestoneLabel(milestone), data: a))
        }
        var html = "<figure class=\"learning\"><h3>Learning curve</h3>" + chart.svg
        html += """
            <figcaption>Per session, oldest first: trial accuracy (hit and correct-rejection trials over scored \
            trials, what graduation criteria count), sensitivity and specificity (station level), each with its \
            95 % Wilson interval shaded. One line per program, step and mode, never joined across them
            """
        if dog.groups.count > 1 {
            html +=
                " (the letters over the chart): "
                + dog.groups.enumerated().map { "\(SeriesChart.groupKey($0.offset)) = \(escape($0.element))" }.joined(
                    separator: "; ") + "."
        } else {
            html += ": \(escape(dog.groups.first ?? "")) only."
        }
        if chart.lines.isEmpty {
            html += " No graduation criterion drawn: \(escape(notes.sorted().joined(separator: "; ")))."
        } else {
            html += """
                 The dashed line is the step's graduation criterion, counted over the dog's trials on the step in \
                its own mode, in order, across sessions. An accuracy criterion is drawn at the accuracy it asks \
                for (n in a row: 100 %), and the dotted purple line is what it looks at: the share correct over \
                its window (the last w scored trials) at each session's end. A count criterion (c correct within \
                at least m trials) asks for no accuracy: the orange line is how far along it the dog is, the \
                lesser of correct / c and trials / m, and it is met at 100 %.
                """
            if !notes.isEmpty {
                html += " Some sessions have none: \(escape(notes.sorted().joined(separator: "; ")))."
            }
        }
        if !dog.milestones.isEmpty {
            html +=
                " Milestones: "
                + dog.milestones.map { m in milestoneLabel(m) + " (\(day(m.time)))" }.map(escape).joined(
                    separator: ", ")
                + "."
        } else {
            html += " No graduation milestone logged for this dog."
        }
        if !unplaced.isEmpty { html += " (\(unplaced.count) milestone(s) earned outside the sessions shown.)" }
        return html + "</figcaption></figure>"
    }

    /// `discrimination/1 passed`, `phase discrimination graduated`.
    static func milestoneLabel(_ m: ReportMilestone) -> String {
        m.step.map { "\(m.phase)/\($0) passed" } ?? "phase \(m.phase) graduated"
    }

    /// The levels a criterion asks for, with their wording: an accuracy criterion at its
    /// accuracy (n in a row: every one of the last n, 100 %); a count criterion at 100 % of its
    /// own progress line (met), never at c/m as if that accuracy were enough.
    static func levels(_ criterion: GraduationCriterion) -> [(Double, String)] {
        switch criterion {
        case .consecutiveCorrect(let n): return [(1, "\(n) in a row")]
        case .correctWithin(let c, let m): return [(1, "\(c) correct in ≥ \(m) trials: met")]
        case .accuracyWindow(let a, let w): return [(a, "\(Int((a * 100).rounded())) % of last \(w)")]
        case .anyOf(let list): return list.flatMap(levels)
        }
    }

    static func latencyChart(_ dog: ReportDog, _ data: ReportData) -> String {
        let points = dog.points
        let spreads = points.map { $0.figures.latency }
        let top = spreads.compactMap { $0?.q3 }.max().map { $0 / 1000 } ?? 1
        let axis = niceAxis(max: top)
        var attributes: [DataAttributes] = []
        for (point, spread) in zip(points, spreads) {
            var a = pointAttributes(point, data)
            a.add("n", spread?.n)
            a.add("median-ms", spread?.median)
            a.add("q1-ms", spread?.q1)
            a.add("q3-ms", spread?.q3)
            attributes.append(a)
        }
        let chart = SeriesChart(
            className: "latency", title: "\(dog.name): latency to indication", xLabel: xAxis(dog, data).title,
            yLabel: "latency (s)", yMax: axis.max, yTicks: axis.ticks, yTickLabel: { String(format: "%g", $0) },
            xLabels: xAxis(dog, data).labels,
            series: [
                Series(
                    name: "median", className: "median", colour: Palette.orange, dash: nil, marker: .circle,
                    values: spreads.map { $0.map { $0.median / 1000 } },
                    band: spreads.map { $0.map { ($0.q1 / 1000, $0.q3 / 1000) } })
            ], pointData: attributes, bandNote: "IQR", groups: points.map(\.group), groupNames: dog.groups)
        return """
            <figure class="latency"><h3>Latency to indication</h3>\(chart.svg)<figcaption>From the start cue to \
            the first indication of each trial that had one: median per session, interquartile range shaded \
            (quantiles by linear interpolation, R's type 7); one line per program, step and mode.</figcaption></figure>
            """
    }

    /// Station by target position: how often each station was indicated, by where the target stood.
    static func positionBias(_ dog: ReportDog) -> String {
        let stations = dog.stations.keys.sorted()
        guard !stations.isEmpty else { return "" }
        let targets = Set(dog.byTargetPosition.keys.map(\.target))
        var rows: [(key: Int?, label: String)] = targets.compactMap { $0 }.sorted().map { ($0, "target at \($0)") }
        if targets.contains(nil) { rows.append((nil, "no target")) }
        let cellW = 62.0
        let cellH = 30.0
        let left = 104.0
        let top = 40.0
        let width = left + cellW * Double(stations.count) + 12
        let height = top + cellH * Double(rows.count + 1) + 34
        var s = """
            <svg class="chart position-bias" role="img" viewBox="0 0 \(Int(width)) \(Int(height))" \
            width="\(Int(width))" height="\(Int(height))" xmlns="http://www.w3.org/2000/svg">\
            <title>\(escape(dog.name)): indication rate per station by the target's position</title>\
            <text class="axis-label" x="\(px(left + cellW * Double(stations.count) / 2))" y="14" \
            text-anchor="middle">station indicated (% of trials it stood in)</text>
            """
        for (c, station) in stations.enumerated() {
            s +=
                "<text class=\"tick\" x=\"\(px(left + cellW * (Double(c) + 0.5)))\" y=\"\(px(top - 8))\" text-anchor=\"middle\">\(station)</text>"
        }
        func cell(_ r: Int, _ c: Int, _ tally: Tally?, _ attributes: DataAttributes, diagonal: Bool) -> String {
            let x = left + cellW * Double(c)
            let y = top + cellH * Double(r)
            guard let tally else {
                return
                    "<rect x=\"\(px(x))\" y=\"\(px(y))\" width=\"\(px(cellW))\" height=\"\(px(cellH))\" fill=\"#f4f4f4\" stroke=\"#fff\"/>"
            }
            let f = tally.figures
            let presented = f.results.scored - f.trialsWithoutStationData
            let indications = f.presentations.indications
            let rate = presented > 0 ? Double(indications) / Double(presented) : nil
            var a = attributes
            a.add("indications", indications)
            a.add("presented", presented)
            a.add("rate", rate)
            // One hue, light to dark (white to Okabe-Ito blue): read by lightness, colour-blind safe.
            let t = rate ?? 0
            let fill = mix(t)
            let ink = t > 0.55 ? "#fff" : "#000"
            let text = rate.map { "\(Int(($0 * 100).rounded())) %" } ?? "–"
            let stroke = diagonal ? " stroke=\"#000\" stroke-width=\"2\"" : " stroke=\"#fff\""
            return """
                <g class="cell"\(a.text)><rect x="\(px(x))" y="\(px(y))" width="\(px(cellW))" height="\(px(cellH))" \
                fill="\(fill)"\(stroke)/><text x="\(px(x + cellW / 2))" y="\(px(y + cellH / 2 + 4))" \
                text-anchor="middle" fill="\(ink)">\(text)</text><title>\(indications) of \(presented)</title></g>
                """
        }
        for (r, row) in rows.enumerated() {
            s +=
                "<text class=\"tick\" x=\"\(px(left - 6))\" y=\"\(px(top + cellH * (Double(r) + 0.5) + 4))\" text-anchor=\"end\">\(escape(row.label))</text>"
            for (c, station) in stations.enumerated() {
                var a = DataAttributes()
                a.add("target", row.key.map { "\($0)" } ?? "none")
                a.add("station", station)
                s += cell(
                    r, c, dog.byTargetPosition[PositionKey(target: row.key, station: station)], a,
                    diagonal: row.key == station)
            }
        }
        // The last row: each station over every trial, as `stats --by station --dog` counts it.
        let totalRow = rows.count
        s +=
            "<text class=\"tick total\" x=\"\(px(left - 6))\" y=\"\(px(top + cellH * (Double(totalRow) + 0.5) + 4))\" text-anchor=\"end\">all trials</text>"
        for (c, station) in stations.enumerated() {
            var a = DataAttributes()
            a.add("target", "all")
            a.add("station", station)
            s += cell(totalRow, c, dog.stations[station], a, diagonal: false)
        }
        s +=
            "<text class=\"axis-label\" x=\"4\" y=\"\(px(height - 8))\">rows: where the target stood; framed: the target's own station</text></svg>"
        // Each station's figures, as `stats --by station`.
        var table = """
            <table class="stations"><thead><tr><th>station</th><th>trials</th><th>hits</th><th>misses</th>\
            <th>false alerts</th><th>correct rejections</th><th>sensitivity</th><th>specificity</th></tr></thead><tbody>
            """
        for station in stations {
            guard let f = dog.stations[station]?.figures else { continue }
            var a = DataAttributes()
            a.add("station", station)
            a.add("trials", f.results.trials)
            a.add("hits", f.presentations.hits)
            a.add("misses", f.presentations.misses)
            a.add("false-alerts", f.presentations.falseAlerts)
            a.add("correct-rejections", f.presentations.correctRejections)
            a.add("indications", f.presentations.indications)
            addProportion(&a, "sensitivity", f.sensitivity)
            addProportion(&a, "specificity", f.specificity)
            table += """
                <tr class="station"\(a.text)><td>\(station)</td><td>\(f.results.trials)</td>\
                <td>\(f.presentations.hits)</td><td>\(f.presentations.misses)</td><td>\(f.presentations.falseAlerts)</td>\
                <td>\(f.presentations.correctRejections)</td><td>\(percent(f.sensitivity))</td>\
                <td>\(percent(f.specificity))</td></tr>
                """
        }
        table += "</tbody></table>"
        return """
            <figure class="position"><h3>Position bias</h3>\(s)<figcaption>Share of trials in which the dog \
            indicated each station (any indication, blanks included), by where the target stood. A dog that \
            searches the lineup indicates the framed cells; a column dark in every row is a favourite station. \
            </figcaption>\(table)</figure>
            """
    }

    static func clickChart(_ dog: ReportDog, _ data: ReportData) -> String {
        let points = dog.points
        guard points.contains(where: { $0.clicks != nil }) else {
            return """
                <figure class="clicks"><h3>The reward's timing</h3><p class="empty">No clicks with a measured onset \
                in these sessions (a <code>--fast</code> simulation logs no raw events).</p></figure>
                """
        }
        let axis = niceAxis(max: points.compactMap { $0.clicks?.worst }.max() ?? 1)
        var attributes: [DataAttributes] = []
        for point in points {
            var a = pointAttributes(point, data)
            a.add("clicks", point.clicks?.n)
            a.add("p50-ms", point.clicks?.p50)
            a.add("p99-ms", point.clicks?.p99)
            a.add("worst-ms", point.clicks?.worst)
            attributes.append(a)
        }
        let chart = SeriesChart(
            className: "click-latency", title: "\(dog.name): click onset latency", xLabel: xAxis(dog, data).title,
            yLabel: "click onset latency (ms)", yMax: axis.max, yTicks: axis.ticks,
            yTickLabel: { String(format: "%g", $0) },
            xLabels: xAxis(dog, data).labels,
            series: [
                Series(
                    name: "p50", className: "p50", colour: Palette.blue, dash: nil, marker: .circle,
                    values: points.map { $0.clicks?.p50 }, band: nil),
                Series(
                    name: "p99", className: "p99", colour: Palette.orange, dash: "6 3", marker: .square,
                    values: points.map { $0.clicks?.p99 }, band: nil),
                Series(
                    name: "worst", className: "worst", colour: Palette.vermillion, dash: "none", marker: .diamond,
                    values: points.map { $0.clicks?.worst }, band: nil),
            ], pointData: attributes)
        return """
            <figure class="clicks"><h3>The reward's timing</h3>\(chart.svg)<figcaption>From the indication's \
            sensor edge (kernel timestamp) to the click's first sample leaving the sound card, as logged with \
            each click: median, 99th percentile and worst per session.</figcaption></figure>
            """
    }

    // MARK: Samples

    static func samplesSection(_ data: ReportData) -> String {
        var html = """
            <section id="samples" class="samples"><h2>Samples</h2>
            <p>Each sample over every dog and session in this report. Uses: trials it stood in. Target samples: hit \
            rate (indicated / presented); control and distractor samples: false-alert rate (indicated / examined, \
            that is 1 − specificity). <strong>Flagged</strong> (the project's rule): at least \
            \(SampleFlag.minimumPresentations) counted presentations, the lower end of its 95 % Wilson \
            interval above the pooled rate of every other sample of its kind (targets with targets; controls \
            with controls and distractors), and odds of indication at least \
            \(Int(SampleFlag.oddsRatio)) times theirs. A flagged control is one the dogs find: contaminated or \
            confounded.</p>
            """
        guard !data.samples.isEmpty else { return html + "<p class=\"empty\">No samples with ids.</p></section>" }
        html += """
            <table class="samples"><thead><tr><th>sample</th><th>kind</th><th>uses</th><th>rate</th>\
            <th>95 % interval</th><th>others</th><th class="bar">0 – 100 %</th><th>flag</th></tr></thead><tbody>
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
            a.add("flagged", sample.flagged ? "true" : "false")
            let what = sample.kind == .target ? "hit" : (sample.kind == .blank ? "" : "false alert")
            html += "<tr class=\"sample\(sample.flagged ? " flagged" : "")\"\(a.text)>"
            html +=
                "<td>\(escape(sample.label))</td><td>\(sample.kind.rawValue)</td><td>\(sample.tally.results.trials)</td>"
            if let r = sample.rate, let v = r.value, let lo = r.lower, let hi = r.upper {
                html += "<td>\(String(format: "%.1f", v * 100)) % \(what) (\(r.successes)/\(r.trials))</td>"
                html += "<td>\(String(format: "%.1f–%.1f", lo * 100, hi * 100))</td>"
                html += "<td>\(sample.restRate.map { String(format: "%.1f %%", $0 * 100) } ?? "–")</td>"
                html += "<td class=\"bar\">\(sampleBar(v, lo, hi, sample.restRate, flagged: sample.flagged))</td>"
            } else {
                html += "<td>–</td><td>–</td><td>–</td><td class=\"bar\"></td>"
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
