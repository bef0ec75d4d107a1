import Foundation
import Testing
import TrainingEngine

/// Issue 34, "one visibility rule": the table is what docs/daemon.md says, cell for cell, and
/// the engine's own audience is the rule's.
@Suite struct VisibilityTests {
    /// The rule as docs/daemon.md draws it: one row per fact, one column per viewer, while a
    /// double-blind session runs (✓ shown, – withheld).
    static func table() -> String {
        var lines = ["| fact | " + Viewer.allCases.map(\.rawValue).joined(separator: " | ") + " |"]
        lines.append("|" + String(repeating: " --- |", count: Viewer.allCases.count + 1))
        for fact in SessionFact.allCases {
            let cells = Viewer.allCases.map { Visibility.shows(fact, to: $0, in: .doubleBlindRunning) ? "✓" : "–" }
            lines.append("| `\(fact.rawValue)` | " + cells.joined(separator: " | ") + " |")
        }
        return lines.joined(separator: "\n")
    }

    @Test func docsDrawTheRuleAsItIs() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let docs = try String(contentsOf: root.appendingPathComponent("docs/daemon.md"), encoding: .utf8)
        #expect(docs.contains(Self.table()), "docs/daemon.md, \"Who sees what\", should hold:\n\(Self.table())")
    }

    @Test func endedOrNotBlindEveryoneSeesEverything() {
        for fact in SessionFact.allCases {
            for viewer in Viewer.allCases {
                #expect(Visibility.shows(fact, to: viewer, in: .doubleBlindEnded))
                #expect(Visibility.shows(fact, to: viewer, in: .notBlind))
                #expect(Visibility.shows(fact, to: viewer, runningIn: .automated))
                #expect(Visibility.shows(fact, to: viewer, runningIn: nil))
            }
        }
    }

    @Test func whileItRunsOnlyTheAssistantSeesTheLayoutAndNobodyTheRest() {
        #expect(
            Visibility.withheld(from: .assistant) == [
                .outcome, .seed, .searchEvent, .guess, .stationInputLevel,
                .sampleUse, .note,
            ])
        #expect(Visibility.withheld(from: .handler).contains(.layout))
        // The lab store's readers see nothing of it: lineup-sync holds its every row back.
        #expect(Visibility.withheld(from: .labReader) == SessionFact.allCases)
        for secret in [SessionFact.layout, .outcome, .seed, .searchEvent, .guess, .sampleUse] {
            for viewer in Viewer.allCases where viewer != .assistant || secret != .layout {
                #expect(!Visibility.shows(secret, to: viewer, in: .doubleBlindRunning), "\(secret) to \(viewer)")
            }
        }
    }

    /// The engine's audience was its own rule, called only by a test, and said a trial's outcome
    /// was for everyone while every surface withheld it; now it is the rule's.
    @Test func theEnginesAudienceIsTheRules() {
        let records: [Record] = [
            .layoutToLoad(trial: 0, audience: .assistantOnly), .searchStarted(trial: 0, at: 0),
            .visit(station: 1, from: 0, to: 1, indicated: false),
            .indication(station: 1, heldFrom: 0, at: 1, atTarget: true),
            .manualClick(station: 2, at: 1), .errorMark(station: nil, at: 1),
            .trialEnded(trial: 0, outcome: .hit, at: 2),
            .interTrialOver(at: 3), .sensorFault(.stuck, station: 0, at: 1), .sensorRecovered(station: 0, at: 2),
        ]
        for record in records {
            let handler = Visibility.shows(record.fact, to: .handler, runningIn: .doubleBlind)
            let assistant = Visibility.shows(record.fact, to: .assistant, runningIn: .doubleBlind)
            let expected: Audience = handler ? .everyone : assistant ? .assistantOnly : .nobodyUntilItEnds
            #expect(record.audience(in: .doubleBlind) == expected, "\(record)")
            #expect(record.audience(in: .automated) == .everyone, "\(record)")
        }
        #expect(Record.trialEnded(trial: 0, outcome: .hit, at: 2).audience(in: .doubleBlind) == .nobodyUntilItEnds)
        #expect(Record.layoutToLoad(trial: 0, audience: .everyone).audience(in: .doubleBlind) == .assistantOnly)
    }
}
