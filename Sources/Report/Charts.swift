import Foundation

// Inline SVG, drawn by hand: no library, no script, nothing fetched. Every chart element that
// stands for a number carries it in `data-` attributes, so a test (or a curious reader) can read
// the figures out of the DOM exactly as they were counted.

/// Okabe & Ito (2008): eight colours told apart with every common colour-vision deficiency.
enum Palette {
    static let black = "#000000"
    static let orange = "#E69F00"
    static let skyBlue = "#56B4E9"
    static let bluishGreen = "#009E73"
    static let yellow = "#F0E442"
    static let blue = "#0072B2"
    static let vermillion = "#D55E00"
    static let reddishPurple = "#CC79A7"
}

/// Attribute values and text, escaped for HTML.
func escape(_ text: String) -> String {
    var out = ""
    out.reserveCapacity(text.utf8.count)
    for c in text.unicodeScalars {
        switch c {
        case "&": out += "&amp;"
        case "<": out += "&lt;"
        case ">": out += "&gt;"
        case "\"": out += "&quot;"
        case "'": out += "&#39;"
        default: out.unicodeScalars.append(c)
        }
    }
    return out
}

/// `data-` attributes; a nil value leaves the attribute out (nothing was counted).
struct DataAttributes {
    private(set) var text = ""

    mutating func add(_ name: String, _ value: String?) {
        guard let value else { return }
        text += " data-\(name)=\"\(escape(value))\""
    }

    /// Doubles as Swift prints them: the shortest text that reads back as the same number, so a
    /// test compares exactly with `stats --json`.
    mutating func add(_ name: String, _ value: Double?) { add(name, value.map { "\($0)" }) }
    mutating func add(_ name: String, _ value: Int?) { add(name, value.map { "\($0)" }) }
}

/// A coordinate, one decimal: enough for a screen, and it keeps the file small.
func px(_ value: Double) -> String { String(format: "%.1f", value) }

/// A round upper bound for an axis (1, 2, 2.5 or 5 times a power of ten) and its ticks.
func niceAxis(max value: Double, ticks: Int = 4) -> (max: Double, ticks: [Double]) {
    guard value > 0, value.isFinite else { return (1, [0, 0.25, 0.5, 0.75, 1]) }
    let raw = value / Double(ticks)
    let magnitude = pow(10, (log10(raw)).rounded(.down))
    let step = [1, 2, 2.5, 5, 10].map { $0 * magnitude }.first { $0 >= raw } ?? 10 * magnitude
    let top = step * (value / step).rounded(.up)
    return (top, stride(from: 0, through: top + step / 2, by: step).map { $0 })
}

enum Marker {
    case circle, square, triangle, diamond

    func svg(x: Double, y: Double, colour: String) -> String {
        switch self {
        case .circle:
            return "<circle cx=\"\(px(x))\" cy=\"\(px(y))\" r=\"3.5\" fill=\"\(colour)\"/>"
        case .square:
            return "<rect x=\"\(px(x - 3.2))\" y=\"\(px(y - 3.2))\" width=\"6.4\" height=\"6.4\" fill=\"\(colour)\"/>"
        case .triangle:
            return
                "<path d=\"M\(px(x)) \(px(y - 4.2))L\(px(x + 4)) \(px(y + 3))L\(px(x - 4)) \(px(y + 3))Z\" fill=\"\(colour)\"/>"
        case .diamond:
            return
                "<path d=\"M\(px(x)) \(px(y - 4.5))L\(px(x + 4.5)) \(px(y))L\(px(x)) \(px(y + 4.5))L\(px(x - 4.5)) \(px(y))Z\" fill=\"none\" stroke=\"\(colour)\" stroke-width=\"1.5\"/>"
        }
    }
}

/// One line of a chart, with an optional shaded band (an interval) around it.
struct Series {
    var name: String
    var className: String
    var colour: String
    /// SVG dash pattern; nil draws a solid line; "none" draws markers only.
    var dash: String?
    var marker: Marker
    var values: [Double?]
    var band: [(Double, Double)?]?
}

/// A horizontal reference line over a run of points (a step's graduation criterion).
struct ReferenceLine {
    var y: Double
    var from: Int
    var to: Int
    var label: String
    var data: DataAttributes
}

/// A vertical mark at a point (a milestone).
struct PointMark {
    var at: Int
    var label: String
    var data: DataAttributes
}

/// Points in order along x (sessions, oldest first), y on a linear axis.
struct SeriesChart {
    var className: String
    var title: String
    var xLabel: String
    var yLabel: String
    var yMax: Double
    var yTicks: [Double]
    var yTickLabel: (Double) -> String
    /// One label per point (its first session's start), each distinct; every one is printed
    /// under a chart of up to `maxPrintedLabels` points, and each point carries its own as its
    /// tooltip (`<title>`) whatever the number.
    var xLabels: [String]
    var series: [Series]
    /// Each point's numbers, on the `<g class="point">` that holds its markers.
    var pointData: [DataAttributes]
    var lines: [ReferenceLine] = []
    var marks: [PointMark] = []
    var bandNote: String?
    /// The line each point belongs to (an index into `groupNames`): series are drawn as one
    /// line per group, never joining points of different groups. Empty: one group.
    var groups: [Int] = []
    var groupNames: [String] = []

    static let maxPrintedLabels = 12

    let width = 780.0
    let left = 58.0
    let right = 170.0
    /// Room above the plot for the lines' keys when there are several.
    var top: Double { groupNames.count > 1 ? 38 : 14 }

    /// The short key of group `g` printed over its runs (`a`, `b`, ... `z`, `a2`, ...); the
    /// caption says which program, step and mode each stands for.
    static func groupKey(_ g: Int) -> String {
        let letter = String(UnicodeScalar(UInt8(97 + g % 26)))
        return g < 26 ? letter : letter + "\(g / 26 + 1)"
    }

    /// Labels too close to stand level are printed slanted, with room below for them.
    var slantedLabels: Bool {
        let n = xLabels.count
        guard n > 1 else { return false }
        let printed = min(n, Self.maxPrintedLabels)
        let spacing = (width - left - right - 16) / Double(printed - 1)
        let widest = Double(xLabels.map(\.count).max() ?? 0) * 6.2
        return spacing < widest + 6
    }
    var bottom: Double { slantedLabels ? 88 : 50 }
    var height: Double { (slantedLabels ? 328 : 290) + keyListHeight }

    var plotWidth: Double { width - left - right }
    var plotHeight: Double { height - keyListHeight - top - bottom }

    /// Text's width at `size` px, estimated wide enough for DejaVu Sans (the font the report
    /// falls back to on Debian): labels are placed by it so none overprints another, the
    /// legend or the chart's edge (ReportGeometryTests measures the drawn boxes in Chromium).
    static func textWidth(_ text: String, size: Double) -> Double { Double(text.count) * size * 0.64 }

    /// Criterion line k's key on the chart (`c1`, `c2`, ...): the line's words, which may be
    /// longer than its run of points, are listed under the chart by it.
    static func lineKey(_ k: Int) -> String { "c\(k + 1)" }

    /// The rows listing the criterion lines under the chart (`c1 = a: 30 in a row: not met ·
    /// ...`); a row too wide for the chart is broken after a " · ".
    var keyRows: [String] {
        var rows: [String] = []
        for (k, line) in lines.enumerated() {
            let run = groupNames.count > 1 ? "\(Self.groupKey(group(line.from))): " : ""
            var row = "\(Self.lineKey(k)) = \(run)"
            for (i, part) in line.label.components(separatedBy: " · ").enumerated() {
                let piece = i == 0 ? part : " · " + part
                if i > 0 && Self.textWidth(row + piece, size: 11) > width - 16 {
                    rows.append(row + " ·")
                    row = "      " + part
                } else {
                    row += piece
                }
            }
            rows.append(row)
        }
        return rows
    }
    var keyListHeight: Double { lines.isEmpty ? 0 : 8 + 15 * Double(keyRows.count) }

    func x(_ i: Int) -> Double {
        let n = xLabels.count
        return n <= 1 ? left + plotWidth / 2 : left + 8 + Double(i) * (plotWidth - 16) / Double(n - 1)
    }

    /// Series side by side at a point, a few pixels apart, so equal values stay visible.
    func x(_ i: Int, series k: Int) -> Double {
        let n = xLabels.count
        let spacing = n <= 1 ? 40 : (plotWidth - 16) / Double(n - 1)
        let dodge = min(7, spacing / 5)
        return x(i) + (Double(k) - Double(series.count - 1) / 2) * dodge
    }

    func y(_ v: Double) -> Double { top + plotHeight * (1 - min(max(v / yMax, 0), 1)) }

    var svg: String {
        var s = """
            <svg class="chart \(className)" role="img" viewBox="0 0 \(Int(width)) \(Int(height))" \
            width="\(Int(width))" height="\(Int(height))" xmlns="http://www.w3.org/2000/svg">\
            <title>\(escape(title))</title>
            """
        // Grid and y axis.
        for t in yTicks {
            s +=
                "<line class=\"grid\" x1=\"\(px(left))\" x2=\"\(px(left + plotWidth))\" y1=\"\(px(y(t)))\" y2=\"\(px(y(t)))\"/>"
            s +=
                "<text class=\"tick\" x=\"\(px(left - 6))\" y=\"\(px(y(t) + 4))\" text-anchor=\"end\">\(escape(yTickLabel(t)))</text>"
        }
        s +=
            "<line class=\"axis\" x1=\"\(px(left))\" x2=\"\(px(left))\" y1=\"\(px(top))\" y2=\"\(px(top + plotHeight))\"/>"
        s +=
            "<line class=\"axis\" x1=\"\(px(left))\" x2=\"\(px(left + plotWidth))\" y1=\"\(px(top + plotHeight))\" y2=\"\(px(top + plotHeight))\"/>"
        s += """
            <text class="axis-label" transform="translate(14 \(px(top + plotHeight / 2))) rotate(-90)" \
            text-anchor="middle">\(escape(yLabel))</text>
            <text class="axis-label" x="\(px(left + plotWidth / 2))" y="\(px(height - keyListHeight - 8))" \
            text-anchor="middle">\(escape(xLabel))</text>
            """
        // x labels: one per point up to `maxPrintedLabels` points, else evenly thinned; slanted
        // when they would touch.
        let n = xLabels.count
        let every = max(1, Int((Double(n) / Double(Self.maxPrintedLabels)).rounded(.up)))
        for i in 0..<n where i % every == 0 {
            s +=
                "<line class=\"axis\" x1=\"\(px(x(i)))\" x2=\"\(px(x(i)))\" y1=\"\(px(top + plotHeight))\" y2=\"\(px(top + plotHeight + 4))\"/>"
            if slantedLabels {
                // Down to the right, where the legend's margin leaves room for the last one.
                let ly = top + plotHeight + 14
                s +=
                    "<text class=\"tick x-label\" x=\"\(px(x(i) - 3))\" y=\"\(px(ly))\" text-anchor=\"start\" transform=\"rotate(35 \(px(x(i) - 3)) \(px(ly)))\">\(escape(xLabels[i]))</text>"
            } else {
                s +=
                    "<text class=\"tick x-label\" x=\"\(px(x(i)))\" y=\"\(px(top + plotHeight + 17))\" text-anchor=\"middle\">\(escape(xLabels[i]))</text>"
            }
        }
        // Over each run of a line (program, step, mode) its key, and a faint rule between runs.
        if groupNames.count > 1 {
            for i in 0..<n where i == 0 || group(i) != group(i - 1) {
                if i > 0 {
                    let edge = (x(i - 1) + x(i)) / 2
                    s +=
                        "<line class=\"group-edge\" x1=\"\(px(edge))\" x2=\"\(px(edge))\" y1=\"\(px(top - 34))\" y2=\"\(px(top + plotHeight))\" stroke=\"#bbb\" stroke-width=\"1\"/>"
                }
                var end = i
                while end + 1 < n && group(end + 1) == group(i) { end += 1 }
                s +=
                    "<text class=\"note group-label\" data-group=\"\(escape(groupNames[group(i)]))\" x=\"\(px((x(i) + x(end)) / 2))\" y=\"\(px(top - 24))\" text-anchor=\"middle\"><title>\(escape(groupNames[group(i)]))</title>\(Self.groupKey(group(i)))</text>"
            }
        }
        // Bands first, lines over them.
        for (k, serie) in series.enumerated() {
            guard let band = serie.band else { continue }
            for run in groupRuns(band.map { $0 != nil }) {
                if run.count == 1 {
                    let i = run[0]
                    let (lo, hi) = band[i]!
                    s +=
                        "<line class=\"band \(serie.className)\" x1=\"\(px(x(i, series: k)))\" x2=\"\(px(x(i, series: k)))\" y1=\"\(px(y(lo)))\" y2=\"\(px(y(hi)))\" stroke=\"\(serie.colour)\" stroke-width=\"8\" stroke-opacity=\"0.22\"/>"
                    continue
                }
                let upper = run.map { "\(px(x($0, series: k))),\(px(y(band[$0]!.1)))" }
                let lower = run.reversed().map { "\(px(x($0, series: k))),\(px(y(band[$0]!.0)))" }
                s +=
                    "<polygon class=\"band \(serie.className)\" points=\"\((upper + lower).joined(separator: " "))\" fill=\"\(serie.colour)\" fill-opacity=\"0.16\"/>"
            }
        }
        // Every label placed in the plot, so the next is placed clear of them (boxes as drawn:
        // x, y of the top left, width, height; 10 px notes).
        var placed: [(x: Double, y: Double, w: Double, h: Double)] = []
        func clear(_ b: (x: Double, y: Double, w: Double, h: Double)) -> Bool {
            !placed.contains { b.x < $0.x + $0.w + 2 && $0.x < b.x + b.w + 2 && b.y < $0.y + $0.h && $0.y < b.y + b.h }
        }
        // Milestone labels low in the plot (curves sit high), stacked so they never overprint,
        // each on the side of its mark where it fits inside the plot.
        for (k, mark) in marks.enumerated() {
            let labelY = top + plotHeight - 8 - Double(marks.count - 1 - k) * 12
            let w = Self.textWidth(mark.label, size: 10)
            let at = x(mark.at)
            let startX = max(
                left + 2,
                at + 3 + w <= left + plotWidth ? at + 3 : at - 3 - w >= left + 2 ? at - 3 - w : left + plotWidth - w)
            placed.append((startX, labelY - 9, w, 12))
            s +=
                "<g class=\"milestone\"\(mark.data.text)><line x1=\"\(px(at))\" x2=\"\(px(at))\" y1=\"\(px(top))\" y2=\"\(px(top + plotHeight))\" stroke=\"\(Palette.black)\" stroke-width=\"1\" stroke-dasharray=\"2 3\"/>"
            s +=
                "<text class=\"note\" x=\"\(px(startX))\" y=\"\(px(labelY))\" text-anchor=\"start\">\(escape(mark.label))</text></g>"
        }
        // Each criterion line with its key at its right end, above or below the line, clear of
        // the other keys and the milestones' labels; its words are listed under the chart.
        for (k, line) in lines.enumerated() {
            let x1 = line.from == line.to ? x(line.from) - 10 : x(line.from)
            let x2 = line.from == line.to ? x(line.to) + 10 : x(line.to)
            let key = Self.lineKey(k)
            let w = Self.textWidth(key, size: 10)
            let ly = y(line.y)
            var chosen: (x: Double, y: Double, w: Double, h: Double)?
            search: for dy in [-4.0, 12, 24, -16, 36, -28] {
                for edge in [x2 - 2 - w, x1 + 2, x2 + 2] {
                    let bx = min(max(edge, left + 2), left + plotWidth - w)
                    let box = (x: bx, y: ly + dy - 9, w: w, h: 12.0)
                    guard box.y >= max(0, top - 14), box.y + box.h <= top + plotHeight else { continue }
                    if clear(box) {
                        chosen = box
                        break search
                    }
                }
            }
            let box = chosen ?? (x: min(max(x2 - 2 - w, left + 2), left + plotWidth - w), y: ly - 13, w: w, h: 12.0)
            placed.append(box)
            s +=
                "<g class=\"criterion\"\(line.data.text)><title>\(escape(line.label))</title><line x1=\"\(px(x1))\" x2=\"\(px(x2))\" y1=\"\(px(ly))\" y2=\"\(px(ly))\" stroke=\"\(Palette.reddishPurple)\" stroke-width=\"2\" stroke-dasharray=\"9 4\"/>"
            s +=
                "<text class=\"note criterion-key\" x=\"\(px(box.x))\" y=\"\(px(box.y + 9))\" text-anchor=\"start\">\(key)</text></g>"
        }
        // The criterion lines' words, under the chart by their keys.
        for (r, row) in keyRows.enumerated() {
            s +=
                "<text class=\"legend criterion-words\" x=\"8\" y=\"\(px(height - keyListHeight + 15 * Double(r + 1)))\" xml:space=\"preserve\">\(escape(row))</text>"
        }
        for (k, serie) in series.enumerated() where serie.dash != "none" {
            for run in groupRuns(serie.values.map { $0 != nil }) where run.count > 1 {
                let points = run.map { "\(px(x($0, series: k))),\(px(y(serie.values[$0]!)))" }.joined(separator: " ")
                let dash = serie.dash.map { " stroke-dasharray=\"\($0)\"" } ?? ""
                var a = DataAttributes()
                a.add("points", run.count)
                if !groupNames.isEmpty { a.add("group", groupNames[group(run[0])]) }
                s +=
                    "<polyline class=\"line \(serie.className)\"\(a.text) points=\"\(points)\" fill=\"none\" stroke=\"\(serie.colour)\" stroke-width=\"1.8\"\(dash)/>"
            }
        }
        // Points with their numbers, each with its own label as a tooltip.
        for i in 0..<n {
            s += "<g class=\"point\"\(pointData[i].text)><title>\(escape(xLabels[i]))</title>"
            for (k, serie) in series.enumerated() {
                guard let v = serie.values[i] else { continue }
                s += serie.marker.svg(x: x(i, series: k), y: y(v), colour: serie.colour)
            }
            s += "</g>"
        }
        // Legend in the right margin: colour, dash and marker, so no series hangs on colour alone.
        s += "<g class=\"legend-box\">"
        var ly = top + 8
        let lx = left + plotWidth + 16
        for serie in series {
            let dash = serie.dash.map { $0 == "none" ? "" : " stroke-dasharray=\"\($0)\"" } ?? ""
            if serie.dash != "none" {
                s +=
                    "<line x1=\"\(px(lx))\" x2=\"\(px(lx + 26))\" y1=\"\(px(ly))\" y2=\"\(px(ly))\" stroke=\"\(serie.colour)\" stroke-width=\"1.8\"\(dash)/>"
            }
            s += serie.marker.svg(x: lx + 13, y: ly, colour: serie.colour)
            s += "<text class=\"legend\" x=\"\(px(lx + 32))\" y=\"\(px(ly + 4))\">\(escape(serie.name))</text>"
            ly += 18
        }
        if let bandNote {
            s +=
                "<rect x=\"\(px(lx))\" y=\"\(px(ly - 6))\" width=\"26\" height=\"12\" fill=\"#888\" fill-opacity=\"0.25\"/>"
            s += "<text class=\"legend\" x=\"\(px(lx + 32))\" y=\"\(px(ly + 4))\">\(escape(bandNote))</text>"
            ly += 18
        }
        if !lines.isEmpty {
            s +=
                "<line x1=\"\(px(lx))\" x2=\"\(px(lx + 26))\" y1=\"\(px(ly))\" y2=\"\(px(ly))\" stroke=\"\(Palette.reddishPurple)\" stroke-width=\"2\" stroke-dasharray=\"9 4\"/>"
            s += "<text class=\"legend\" x=\"\(px(lx + 32))\" y=\"\(px(ly + 4))\">criterion</text>"
            ly += 18
        }
        if !marks.isEmpty {
            s +=
                "<line x1=\"\(px(lx + 13))\" x2=\"\(px(lx + 13))\" y1=\"\(px(ly - 7))\" y2=\"\(px(ly + 7))\" stroke=\"\(Palette.black)\" stroke-dasharray=\"2 3\"/>"
            s += "<text class=\"legend\" x=\"\(px(lx + 32))\" y=\"\(px(ly + 4))\">milestone</text>"
        }
        return s + "</g></svg>"
    }

    /// The group of point `i` (0 when the chart has one group).
    func group(_ i: Int) -> Int { i < groups.count ? groups[i] : 0 }

    /// The runs one line is drawn through: each group's points in order (skipping other groups'
    /// points between them), broken where a value is missing.
    private func groupRuns(_ present: [Bool]) -> [[Int]] {
        let count = groups.isEmpty ? 1 : (groups.max() ?? 0) + 1
        var all: [[Int]] = []
        for g in 0..<count {
            var current: [Int] = []
            for i in present.indices where group(i) == g {
                if present[i] {
                    current.append(i)
                } else if !current.isEmpty {
                    all.append(current)
                    current = []
                }
            }
            if !current.isEmpty { all.append(current) }
        }
        return all
    }
}
