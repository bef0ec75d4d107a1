import Foundation
import Glibc
import SessionLog
import StationControl
import Testing
import TrainingEngine

/// Blinding is a property of what the handler's side receives: every byte of it, during a
/// double-blind block, is checked against the block's layouts. Nothing in it may name a
/// station the dog visited or indicated, a sample, or how a trial went; and a predictor that
/// learns from those bytes must do no better than chance at telling where the target was,
/// while the same predictor finds it at once in the full lines revealed after the session.
@Suite(.serialized, .ownThreads) struct BlindingTests {
    @Test func nothingTheHandlerReceivesPredictsTheTarget() throws {
        guard let daemon = try ServingStationTests.Daemon(speed: 30) else { return }
        defer { if daemon.process.isRunning { _ = daemon.terminate() } }
        #expect(daemon.waitReady())
        let client = daemon.client
        let labels = ["T-1", "C-1", "C-2", "C-3", "C-4", "C-5"]
        var sampleIds: [String] = []
        for label in labels {
            sampleIds.append(
                try client.addSample(SampleEntry(label: label, kind: label.hasPrefix("T") ? .target : .control)))
        }
        let watched = try #require(Watched(path: daemon.socket))
        // What the handler's tools were told, in order, one entry per trial.
        var replies: [Int: [String]] = [:]
        let encoder = JSONEncoder()
        func keep(_ trial: Int, _ value: some Encodable) {
            replies[trial, default: []].append(String(decoding: (try? encoder.encode(value)) ?? Data(), as: UTF8.self))
        }
        let trials = 20
        let started = try client.sessionStart(
            SessionRequest(
                dog: "Rex", program: "research-5-station", step: "phase-3/1", trials: trials, samples: labels, seed: 7))
        keep(0, started)
        do {
            _ = try client.layout(view: .handler)
            Issue.record("the handler's view was given the layout")
        } catch {
            keep(0, "\(error)")
        }
        for n in 1...trials {
            // The virtual dog may still be at a station: the start is refused, the press repeated.
            var began = false
            for _ in 0..<200 where !began {
                do {
                    keep(n, try client.ready())
                    began = true
                } catch {
                    keep(n, "\(error)")
                    usleep(20_000)
                }
            }
            #expect(began, "trial \(n) never started")
            var polls = 0
            while (try? client.status().trialsDone) ?? 0 < n && polls < 1000 {
                if polls % 5 == 0, let status = try? client.status() { keep(n, status) }
                polls += 1
                usleep(10_000)
            }
            #expect(polls < 1000, "trial \(n) never ended")
        }
        let handlerDuring = watched.lines
        try client.endSession(suggestions: nil)
        let (status, out) = daemon.terminate()
        #expect(status == 0)
        #expect(watched.done.wait(timeout: .now() + 10) == .success)

        // The truth, from the log.
        let reader = try SessionLog.openReader(path: daemon.db)
        let logged = try reader.trials().sorted { $0.number < $1.number }
        #expect(logged.count == trials)
        var target: [Int: String] = [:]
        for trial in logged {
            let slot = trial.layout.first { $0.kind == .target }
            target[trial.number] = slot.map { ["A", "B", "C", "D", "E"][$0.station - 1] } ?? "none"
        }
        #expect(Set(target.values).count >= 4, "the block's targets stood in too few stations: \(target)")

        // The terminal and journal during the session: everything before the reveal.
        let printed = out.components(separatedBy: "the double-blind session is over")
        #expect(printed.count == 2, "no reveal after the session: \(out)")
        let printedDuring = printed[0].split(separator: "\n").map(String.init)
        let revealed = printed.count == 2 ? printed[1].split(separator: "\n").map(String.init) : []

        // 1. Nothing names a station, a sample, an outcome or the target.
        var everything = handlerDuring + printedDuring
        for (_, texts) in replies { everything += texts }
        let forbidden =
            [
                "at_target", "\"station\":\"", ":target", ":control", "hit", "miss", "false-alert", "correct-rejection",
                "T-1", "C-1",
            ]
            + sampleIds.map { String($0.prefix(8)) }
        for line in everything where !line.contains(#""kind":"fault""#) {
            for word in forbidden {
                #expect(!line.contains(word), "a handler's channel said \(word): \(line)")
            }
        }

        // 2. Nothing predicts the target: per trial, the handler's bytes.
        var handlerBytes: [Int: [String]] = replies
        for line in handlerDuring {
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String] else {
                continue
            }
            let trial =
                object["trial"].flatMap(Int.init) ?? Int(
                    object["line"]?.split(separator: " ")[1].split(separator: "/").first ?? "") ?? 0
            handlerBytes[trial, default: []].append(line)
        }
        for line in printedDuring where line.hasPrefix("trial ") {
            let n = Int(line.split(separator: " ", omittingEmptySubsequences: true)[1].split(separator: "/")[0]) ?? 0
            handlerBytes[n, default: []].append(line)
        }
        let blind = Self.leaveOneOutAccuracy(handlerBytes, target)
        // 5 stations and a few trials without a target: chance is about a fifth.
        #expect(blind <= 0.5, "the handler's bytes predicted the target in \(blind * 100) % of trials")

        // The same predictor on the revealed lines finds the target: it can see a leak.
        var revealedBytes: [Int: [String]] = [:]
        for line in revealed where line.hasPrefix("trial ") {
            let n = Int(line.split(separator: " ", omittingEmptySubsequences: true)[1].split(separator: "/")[0]) ?? 0
            revealedBytes[n, default: []].append(line)
        }
        #expect(revealedBytes.count == trials, "revealed: \(revealed)")
        // Not near 1: leaving one trial out leaves a station that held the target twice (or the
        // two trials without one) a single example, and the search paths' words are noise
        // beside it (0.8 was seen under load); far above chance all the same.
        let open = Self.leaveOneOutAccuracy(revealedBytes, target)
        #expect(open >= 0.6, "the predictor missed the target in the full lines (\(open))")
    }

    /// A naive Bayes classifier over each trial's words and word pairs (digits as #), trained on
    /// every other trial and asked for this one's target station: the share it gets right.
    static func leaveOneOutAccuracy(_ bytes: [Int: [String]], _ target: [Int: String]) -> Double {
        func features(_ texts: [String]) -> Set<String> {
            var out: Set<String> = []
            for text in texts {
                let words = text.lowercased().split { !$0.isLetter && !$0.isNumber }.map {
                    $0.allSatisfy(\.isNumber) ? "#" : String($0)
                }
                out.formUnion(words)
                for (a, b) in zip(words, words.dropFirst()) { out.insert(a + " " + b) }
            }
            return out
        }
        let trials = target.keys.sorted()
        let featured = Dictionary(uniqueKeysWithValues: trials.map { ($0, features(bytes[$0] ?? [])) })
        let classes = Array(Set(target.values)).sorted()
        var right = 0
        for held in trials {
            var best = (score: -Double.infinity, label: "")
            for label in classes {
                let others = trials.filter { $0 != held && target[$0] == label }
                let prior = log(Double(others.count + 1) / Double(trials.count - 1 + classes.count))
                var score = prior
                for feature in featured[held] ?? [] {
                    let seen = others.filter { featured[$0]?.contains(feature) == true }.count
                    score += log(Double(seen + 1) / Double(others.count + 2))
                }
                if score > best.score { best = (score, label) }
            }
            if best.label == target[held] { right += 1 }
        }
        return trials.isEmpty ? 0 : Double(right) / Double(trials.count)
    }
}
