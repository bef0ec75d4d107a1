import Figures
import Foundation
import SessionLog
import TrainingEngine

extension ReportHTML {
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
        html += sampleFigures(dog, data)
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
        var verdicts: [(session: ReportSession, verdicts: [CriterionVerdict])] = []
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
                // Each criterion's label carries its verdict on the step's trials at the end of
                // the run (the engine's, once met, met): never "met" by its wording alone.
                let last = data.sessions[points[end].sessions[points[end].sessions.count - 1]]
                verdicts.append((session, last.criterionVerdicts))
                var byLevel: [(level: Double, labels: [String])] = []
                for ((level, label), verdict) in zip(levels(criterion), last.criterionVerdicts) {
                    if let k = byLevel.firstIndex(where: { $0.level == level }) {
                        byLevel[k].labels.append("\(label): \(verdict.met ? "met" : "not met")")
                    } else {
                        byLevel.append((level, ["\(label): \(verdict.met ? "met" : "not met")"]))
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
                its own mode, in order, across sessions; each is keyed on the chart (c1, c2, ...) and worded with \
                its verdict under it. An accuracy criterion is drawn at the accuracy it asks \
                for (n in a row: 100 %), and the dotted purple line is what it looks at: the share correct over \
                its window (the last w scored trials) at each session's end. A count criterion (c correct within \
                at least m trials) asks for no accuracy: the orange line is how far along it the dog is, the \
                lesser of correct / c and trials / m, and it is met at 100 %.
                """
            if !notes.isEmpty {
                html += " Some sessions have none: \(escape(notes.sorted().joined(separator: "; ")))."
            }
            // Each verdict in words, with the counts it was judged on (over every scored trial of
            // the dog on the step in its own mode, before the report's window too).
            for (session, list) in verdicts where !list.isEmpty {
                let step = [session.phase, session.step].compactMap { $0 }.joined(separator: "/")
                html +=
                    " \(escape(step)) at the end of its run: "
                    + list.map { escape("\($0.criterion): \($0.words)") }.joined(separator: "; ") + "."
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
        case .correctWithin(let c, let m): return [(1, "\(c) correct in ≥ \(m) trials")]
        case .accuracyWindow(let a, let w): return [(a, "\(Int((a * 100).rounded())) % of last \(w)")]
        case .anyOf(let list): return list.flatMap(levels)
        }
    }
}
