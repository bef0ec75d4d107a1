import Figures
import Foundation
import SessionLog
import Testing
import TrainingEngine

/// Issue 32: the report's learning curve drew its labels over one another and over the legend:
/// a criterion's words, longer than its run of points, overprinted the next run's and ran off
/// the chart's left edge; a milestone's label left of the plot's middle ran into the legend.
/// Measured as Chromium draws the report, at 390 and 1280 px: no two texts of a learning curve
/// overlap, every text lies inside its chart, and nothing of the plot (criterion lines and keys,
/// milestones, points) reaches into the legend. The slanted session labels under the axis are
/// left out: their boxes, upright, overlap by construction (`SeriesChart.slantedLabels`).
@Suite("the learning curve's geometry", .serialized, .ownThreads)
struct ReportGeometryTests {
    /// Two steps with several criteria and long names, as a program may have them.
    static let program = """
        name = "curve"
        title = "Curve"
        description = "Two automated steps with several criteria and long names."

        [[phases]]
        id = "discrimination-with-distractors"
        title = "Discrimination with distractors"
        description = "Long names on purpose."

        [[phases.steps]]
        id = "first-block-of-many"
        title = "Target among a control and a blank"
        description = "Three containers."
        mode = "automated"
        lineup = { stations = 3, targets = 1, controls = 1, blanks = 1 }
        hold_s = 2.0
        criterion = [
          { kind = "consecutive-correct", n = 30 },
          { kind = "correct-within", correct = 40, min_trials = 100 },
          { kind = "accuracy-window", accuracy = 0.8, window = 10 },
          { kind = "accuracy-window", accuracy = 0.95, window = 200 },
        ]

        [[phases.steps.exercises]]
        id = "1"
        title = "Block of 5"
        instruction = "Load as told."
        duration_s = 60
        trials = 5

        [[phases.steps]]
        id = "second-block-of-many"
        title = "Target among two controls"
        description = "Three containers."
        mode = "automated"
        lineup = { stations = 3, targets = 1, controls = 2 }
        hold_s = 2.0
        criterion = [
          { kind = "consecutive-correct", n = 12 },
          { kind = "accuracy-window", accuracy = 0.7, window = 20 },
        ]

        [[phases.steps.exercises]]
        id = "1"
        title = "Block of 5"
        instruction = "Load as told."
        duration_s = 60
        trials = 5
        """

    /// Nine sessions of five trials over the two steps (a run of four, three, two), a milestone
    /// with a long name at the fifth session (left of the plot's middle) and at the last.
    func fill(_ db: String) throws {
        let log = try SessionLog(path: db, create: true)
        let dog = DogRecord(name: "Rex", time: LogTime(monoNs: 1, wallNs: 1_740_819_600_000_000_000))
        try log.append([dog])
        var wall = dog.time.wallNs
        func at(_ gap: Int64) -> LogTime {
            wall += gap
            return LogTime(monoNs: wall - dog.time.wallNs, wallNs: wall)
        }
        let program = try log.logProgram(ProgramRecord(name: "curve", content: Self.program))
        let steps =
            Array(repeating: "first-block-of-many", count: 4) + Array(repeating: "second-block-of-many", count: 3)
            + Array(repeating: "first-block-of-many", count: 2)
        for (index, step) in steps.enumerated() {
            let s = SessionRecord(
                dogId: dog.id, programId: program, phase: "discrimination-with-distractors", step: step, exercise: "1",
                mode: .automated, settings: #"{"stations":"A,B,C"}"#, station: "pi-7", bootId: nil,
                time: at(600_000_000_000))
            var records: [any AppendableRecord] = [s]
            for n in 1...5 {
                let outcome: TrialOutcome = (n + index) % 4 == 0 ? .miss : .hit
                let layout = (1...3).map { station in
                    StationSlot(
                        station: station, sampleId: nil, kind: station == 2 ? .target : .control,
                        seen: StationSeen(
                            visited: true, indicated: outcome == .hit && station == 2,
                            firstIndicationNs: outcome == .hit && station == 2 ? 2_000_000_000 : nil))
                }
                records.append(
                    TrialRecord(
                        sessionId: s.id, number: n, layout: layout, outcome: outcome,
                        indicatedStation: outcome == .hit ? 2 : nil, latencyNs: outcome == .hit ? 2_000_000_000 : nil,
                        started: at(1_000_000), ended: at(1_000_000)))
            }
            records.append(SessionEnd(sessionId: s.id, how: .ended, time: at(1_000_000)))
            if index == 4 || index == steps.count - 1 {
                records.append(
                    MilestoneRecord(
                        dogId: dog.id, sessionId: s.id, phase: "discrimination-with-distractors", step: step,
                        criterion: "by hand", time: at(1_000_000)))
            }
            try log.append(records)
        }
    }

    /// Written into the report after it is made: each learning curve's texts and the legend,
    /// as Chromium lays them out, percent-encoded JSON in the body's `data-geometry`.
    static let measuring = """
        <script>
        (() => {
          const box = (e) => { const b = e.getBoundingClientRect(); return {x: b.left, y: b.top, w: b.width, h: b.height}; };
          // The legend's group, or (a report drawn before it had one) its texts' bounding box.
          const legend = (svg) => {
            const g = svg.querySelector('g.legend-box');
            if (g) return box(g);
            const all = [...svg.querySelectorAll('text.legend')].map(box);
            const x = Math.min(...all.map((b) => b.x)), y = Math.min(...all.map((b) => b.y));
            return {x, y, w: Math.max(...all.map((b) => b.x + b.w)) - x, h: Math.max(...all.map((b) => b.y + b.h)) - y};
          };
          const charts = [...document.querySelectorAll('svg.learning-curve')].map((svg) => ({
            svg: box(svg),
            texts: [...svg.querySelectorAll('text')].filter((t) => !t.classList.contains('x-label'))
              .map((t) => Object.assign({what: (t.getAttribute('class') || '') + ' ' + t.textContent}, box(t))),
            legend: legend(svg),
            plot: [...svg.querySelectorAll('g.criterion > *, g.milestone > *, g.point > *')]
              .filter((e) => e.tagName !== 'title').map((e) => Object.assign({what: e.tagName}, box(e))),
          }));
          document.body.setAttribute('data-geometry', encodeURIComponent(JSON.stringify(charts)));
        })();
        </script>
        """

    struct Box: Decodable {
        var what: String?
        var x, y, w, h: Double
        /// Overlapping by more than half a pixel each way (touching is not overlapping).
        func overlaps(_ o: Box) -> Bool {
            x + 0.5 < o.x + o.w && o.x + 0.5 < x + w && y + 0.5 < o.y + o.h && o.y + 0.5 < y + h
        }
        func inside(_ o: Box) -> Bool {
            x >= o.x - 0.5 && y >= o.y - 0.5 && x + w <= o.x + o.w + 0.5 && y + h <= o.y + o.h + 0.5
        }
    }
    struct Chart: Decodable {
        var svg: Box
        var texts: [Box]
        var legend: Box
        var plot: [Box]
    }

    @Test func noLabelOfTheLearningCurveOverprintsAnotherTheLegendOrTheEdge() throws {
        let browserTests = ReportBrowserTests()
        guard let browser = browserTests.chromium() else { return }
        let dir = try browserTests.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let db = "\(dir)/log.db"
        try fill(db)
        let report = "\(dir)/report.html"
        let run = try lineupctl(["report", "--db", db, "-o", report])
        #expect(run.status == 0, "\(run.stderr)")
        let html = try String(contentsOfFile: report, encoding: .utf8)
        // Not an empty check: every criterion level of each run (3, 2, 3) and both milestones.
        #expect(html.components(separatedBy: "<g class=\"criterion\"").count - 1 == 8, "criterion lines")
        #expect(html.components(separatedBy: "<g class=\"milestone\"").count - 1 == 2, "milestones")
        let measured = "\(dir)/measured.html"
        try html.replacingOccurrences(of: "</body>", with: Self.measuring + "</body>").write(
            toFile: measured, atomically: true, encoding: .utf8)
        for width in [390, 1280] {
            let dom = try browserTests.headless(
                browser, ["--dump-dom", "--window-size=\(width),3000", "file://\(measured)"], profile: "\(dir)/profile")
            #expect(dom.status == 0)
            let encoded = try #require(
                dom.stdout.components(separatedBy: "data-geometry=\"").dropFirst().first?.prefix { $0 != "\"" },
                "no geometry measured at \(width) px")
            let charts = try JSONDecoder().decode(
                [Chart].self, from: Data(try #require(String(encoded).removingPercentEncoding).utf8))
            #expect(charts.count == 1)
            for chart in charts {
                #expect(chart.texts.count > 20 && chart.plot.count > 20, "\(width) px: too little measured")
                for (i, a) in chart.texts.enumerated() {
                    #expect(a.inside(chart.svg), "\(width) px: \(a.what ?? "") leaves the chart: \(a) in \(chart.svg)")
                    for b in chart.texts[(i + 1)...] where a.overlaps(b) {
                        Issue.record("\(width) px: \(a.what ?? "") overprints \(b.what ?? ""): \(a) \(b)")
                    }
                }
                for item in chart.plot where item.overlaps(chart.legend) {
                    Issue.record("\(width) px: the plot's \(item.what ?? "") reaches into the legend: \(item)")
                }
                for text in chart.texts where text.overlaps(chart.legend) && !text.inside(chart.legend) {
                    Issue.record("\(width) px: \(text.what ?? "") reaches into the legend: \(text)")
                }
            }
        }
    }
}
