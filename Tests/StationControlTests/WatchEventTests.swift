import Foundation
import StationControl
import Testing

/// Issue 34, "one vocabulary": every kind of the watch stream is one Swift definition, written
/// and read by it, on the wire as the page's JavaScript reads it (string values), and listed
/// with every field in docs/daemon.md.
@Suite struct WatchEventTests {
    /// One event of each kind, every optional field given.
    static func sample(_ kind: WatchEvent.Kind) -> WatchEvent {
        switch kind {
        case .edge, .sniff, .indication, .click, .button, .cue, .fault, .note, .feeder:
            .station(
                WatchEvent.StationEvent(
                    kind: kind, monoNs: 1_234_567_890, station: "B", value: 1, durationNs: 2_000_000,
                    onsetLatencyNs: 1_500_000, detail: #"{"sensor":"stuck"}"#, trial: 3, fault: "stuck"))
        case .trial:
            .trial(line: "trial 3/20  over (double-blind: its stations and outcome are shown when the session ends)")
        case .revealed:
            .revealed(line: "trial 3/20  A:control B:target  search: B held  indication: B  click at B 812 µs  hit")
        case .committed: .committed(trial: 3, sha256: String(repeating: "ab", count: 32))
        case .timer: .timer(trial: 3, secondsLeft: 60.5, endsMonoNs: 9_876_543_210)
        case .sessionStart: .sessionStart(session: "3f2a9c1e-0000-4000-8000-000000000001", dog: "Rex")
        case .sessionResume: .sessionResume(session: "3f2a9c1e-0000-4000-8000-000000000001", dog: "Rex", trial: 4)
        case .sessionEnd: .sessionEnd(session: "3f2a9c1e-0000-4000-8000-000000000001")
        case .milestone: .milestone(dog: "Rex", phase: "phase-3", step: "1", criterion: "30 correct in a row")
        case .logPaused: .logPaused(why: "the disk is full")
        case .logWritable: .logWritable
        }
    }

    @Test func everyKindIsReadBackAsWritten() throws {
        for kind in WatchEvent.Kind.allCases {
            let event = Self.sample(kind)
            #expect(event.kind == kind)
            let line = event.line
            #expect(try WatchEvent(line: line) == event, "\(line)")
            // The wire: one object of string values, as the page's JavaScript reads it.
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String])
            #expect(object == event.fields && object["kind"] == kind.rawValue, "\(line)")
        }
        // Numbers in decimal, as strings, keys in byte order: the bytes lineupd always sent.
        #expect(
            WatchEvent.timer(trial: 3, secondsLeft: 60.0, endsMonoNs: 12).line
                == #"{"ends_mono_ns":"12","kind":"timer","seconds_left":"60.0","trial":"3"}"#)
        #expect(
            WatchEvent.station(.init(kind: .edge, monoNs: 5, value: 0)).line
                == #"{"kind":"edge","mono_ns":"5","value":"0"}"#)
        #expect(
            WatchEvent.committed(trial: 1, sha256: "a/b").line == #"{"kind":"committed","sha256":"a\/b","trial":"1"}"#)
    }

    @Test func aLineThatIsNoKindSaysWhatIsWrong() {
        let cases: [(String, String)] = [
            ("not json", "it is not JSON"),
            (#"{"kind":"trial","line":3}"#, "not one JSON object of string values"),
            (#"{"line":"x"}"#, "it has no kind"),
            (#"{"kind":"sneeze"}"#, "its kind sneeze is none of this lineupctl's"),
            (#"{"kind":"committed","trial":"3"}"#, "it has no sha256"),
            (#"{"kind":"edge","mono_ns":"soon"}"#, "its mono_ns is not a number: soon"),
        ]
        for (line, problem) in cases {
            do {
                _ = try WatchEvent(line: line)
                Issue.record("\(line) was read")
            } catch {
                #expect(error.problem.contains(problem), "\(line): \(error.problem)")
                #expect(error.description.contains(line))
            }
        }
    }

    /// docs/daemon.md's "The watch stream" names every kind and every field it can carry.
    @Test func docsListEveryKindAndField() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let docs = try String(contentsOf: root.appendingPathComponent("docs/daemon.md"), encoding: .utf8)
        let section = try #require(
            docs.components(separatedBy: "### The watch stream\n").dropFirst().first?.components(separatedBy: "\n#")
                .first)
        for kind in WatchEvent.Kind.allCases {
            #expect(section.contains("`\(kind.rawValue)`"), "kind \(kind.rawValue) is not in docs/daemon.md")
            for field in Self.sample(kind).fields.keys {
                #expect(section.contains("`\(field)`"), "field \(field) of \(kind.rawValue) is not in docs/daemon.md")
            }
        }
    }
}
