import Figures
import Foundation
import SessionLog
import TrainingEngine

extension ReportHTML {
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
        var rows: [(key: NamedStation?, label: String)] = targets.compactMap { $0 }.sorted().map {
            ($0, "target at \($0.name)")
        }
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
                "<text class=\"tick\" x=\"\(px(left + cellW * (Double(c) + 0.5)))\" y=\"\(px(top - 8))\" text-anchor=\"middle\">\(escape(station.name))</text>"
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
                a.add("target", row.key?.id ?? "none")
                a.add("station", station.id)
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
            a.add("station", station.id)
            s += cell(totalRow, c, dog.stations[station], a, diagonal: false)
        }
        s +=
            "<text class=\"axis-label\" x=\"4\" y=\"\(px(height - 8))\">rows: where the target stood; framed: the target's own station</text></svg>"
        // Each station's figures, as `stats --by station`.
        var table = """
            <table class="stations"><thead><tr><th>station</th><th>number</th><th>trials</th><th>hits</th><th>misses</th>\
            <th>false alerts</th><th>correct rejections</th><th>sensitivity</th><th>specificity</th></tr></thead><tbody>
            """
        for station in stations {
            guard let f = dog.stations[station]?.figures else { continue }
            var a = DataAttributes()
            a.add("station", station.id)
            a.add("station-number", station.number)
            a.add("trials", f.results.trials)
            a.add("hits", f.presentations.hits)
            a.add("misses", f.presentations.misses)
            a.add("false-alerts", f.presentations.falseAlerts)
            a.add("correct-rejections", f.presentations.correctRejections)
            a.add("indications", f.presentations.indications)
            addProportion(&a, "sensitivity", f.sensitivity)
            addProportion(&a, "specificity", f.specificity)
            table += """
                <tr class="station"\(a.text)><td>\(escape(station.name))</td><td>\(station.number)</td>\
                <td>\(f.results.trials)</td>\
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
}
