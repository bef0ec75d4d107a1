import Foundation
import ProgramFiles
import StationControl
import Testing
import TrainingEngine

/// `lineupctl programs`, `program show` and `program check`, run as the built tool against a
/// programs directory holding a good file, a broken one and one named like a built-in.
@Suite(.ownThreads) struct ProgramCommandsTests {
    let directory: String
    let study: String

    init() throws {
        directory =
            FileManager.default.temporaryDirectory.appendingPathComponent("programs-\(UUID().uuidString)")
            .path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        study = try String(
            contentsOf: root.appendingPathComponent("Sources/ProgramFiles/Programs/study.toml"), encoding: .utf8)
        // A copy under its own name, one whose two-station lineup lists four containers, and
        // one that a built-in hides.
        try study.replacingOccurrences(of: "name = \"study\"", with: "name = \"club\"")
            .write(toFile: directory + "/club.toml", atomically: true, encoding: .utf8)
        try study.replacingOccurrences(of: "stations = 2, targets = 1, blanks = 1", with: "stations = 2, blanks = 3")
            .write(toFile: directory + "/broken.toml", atomically: true, encoding: .utf8)
        try study.write(toFile: directory + "/study.toml", atomically: true, encoding: .utf8)
        try "not a program".write(toFile: directory + "/notes.txt", atomically: true, encoding: .utf8)
    }

    /// The loader's own message for the broken file, to compare with what the tool says.
    func brokenMessage() throws -> String {
        let text = try String(contentsOfFile: directory + "/broken.toml", encoding: .utf8)
        do {
            _ = try Program.parse(toml: text, source: directory + "/broken.toml")
        } catch {
            return error.description
        }
        Issue.record("the broken program loaded")
        return ""
    }

    @Test func theListingShowsEveryFileAndWhyOneDoesNotLoad() throws {
        let listed = try lineupctl(["programs", "--programs", directory])
        #expect(listed.status == 0 && listed.stderr.isEmpty, "\(listed.stderr)")
        let lines = listed.stdout.split(separator: "\n").map(String.init)
        // Header, rule, four built-ins, three files; notes.txt is not a program.
        #expect(lines.count == 9, "\(listed.stdout)")
        let broken = try #require(lines.first { $0.hasPrefix("broken ") })
        #expect(broken.hasSuffix("DOES NOT LOAD: " + (try brokenMessage())), "\(broken)")
        let club = try #require(lines.first { $0.hasPrefix("club ") })
        #expect(club.contains("Scent discrimination") && club.contains(directory + "/club.toml"))
        #expect(lines.contains { $0.hasPrefix("study ") && $0.contains("not offered") })
        #expect(!listed.stdout.contains("notes"))

        let json = try lineupctl(["programs", "--programs", directory, "--json"])
        #expect(json.status == 0)
        let entries = try #require(
            try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        #expect(
            entries.map { $0["name"] as? String } == [
                "study", "research-5-station", "olfactometer-rig", "threshold", "broken", "club", "study",
            ])
        #expect(entries[4]["error"] as? String == (try brokenMessage()))
        #expect(entries[5]["phases"] as? Int == 3 && entries[5]["steps"] as? Int == 6)
        #expect(entries[0]["source"] as? String == "built-in")

        let missing = try lineupctl(["programs", "--programs", directory + "/nowhere"])
        #expect(missing.status == 1)
        #expect(missing.stderr == "lineupctl: \(directory)/nowhere: no such directory\n")
    }

    @Test func showSaysEachStepInWordsAndAsJSON() throws {
        let shown = try lineupctl(["program", "show", "study"])
        #expect(shown.status == 0 && shown.stderr.isEmpty, "\(shown.stderr)")
        for expected in [
            "study: Scent discrimination", "Step indicate/1: One container", "Lineup        target alone",
            "Criterion     each exercise done correctly (exercise 1: 4 correct rounds in a row, exercise 2: 4 correct rounds in a row)",
            "Starts        by the trainer (ready), each repetition a round",
            "Exercise 2: Exercise 2, 20 s, up to 4 times in a session",
            "Step discrimination/2: Target among four controls", "Mode          double-blind",
            "Lineup        target + 4 controls, 1 trial in 10 without target",
            "Criterion     95 % of the last 20 trials correct, or 85 % of the last 200 trials correct",
            "Hold          2 s at one station", "Interval      10 s between trials",
            "Exercise 1: Block of 20, 20 trials a block, 60 s to search each",
        ] {
            #expect(shown.stdout.contains(expected), "missing: \(expected)")
        }
        let program = try #require(try Program.builtin(named: "research-5-station"))
        let json = try lineupctl(["program", "show", "research-5-station", "--json"])
        #expect(json.status == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let phases = try #require(object["phases"] as? [[String: Any]])
        #expect(phases.map { $0["id"] as? String } == program.phases.map(\.id))
        let last = try #require((phases.last?["steps"] as? [[String: Any]])?.first)
        #expect(last["step"] as? String == "phase-3/1")
        #expect(last["inter_trial_s"] as? Double == 15)
        let lineup = try #require(last["lineup"] as? [String: Any])
        #expect(lineup["in_words"] as? String == "target + 4 controls, 1 trial in 10 without target")
        #expect(lineup["controls"] as? Int == 4 && lineup["no_target_share"] as? Double == 0.1)
        let exercise = try #require((last["exercises"] as? [[String: Any]])?.first)
        #expect(exercise["trials"] as? Int == 20 && exercise["search_timeout_s"] as? Double == 60)
        #expect(exercise["repeats"] == nil)

        // A name from the directory, and a path.
        let club = try lineupctl(["program", "show", "club", "--programs", directory])
        #expect(club.status == 0 && club.stdout.hasPrefix("club: "), "\(club.stderr)")
        let byPath = try lineupctl(["program", "show", directory + "/club.toml"])
        #expect(byPath.stdout == club.stdout)
        let unknown = try lineupctl(["program", "show", "nope", "--programs", directory])
        #expect(unknown.status == 1 && unknown.stdout.isEmpty)
        #expect(unknown.stderr.hasPrefix("lineupctl: no program named \"nope\""), "\(unknown.stderr)")
    }

    @Test func checkSaysOkOrTheOneLineThatIsWrong() throws {
        let ok = try lineupctl(["program", "check", directory + "/club.toml", "--stations", "5"])
        #expect(ok.status == 0 && ok.stderr.isEmpty)
        #expect(ok.stdout == "ok: club, 3 phases, 6 steps\n")
        let small = try lineupctl(["program", "check", directory + "/club.toml", "--stations", "3"])
        #expect(small.status == 1 && small.stdout.isEmpty)
        #expect(
            small.stderr
                == "lineupctl: \(directory)/club.toml: phases[2].steps[1].lineup.stations: step \"Target among four controls\" needs 5 stations but the board has 3\n"
        )
        let broken = try lineupctl(["program", "check", directory + "/broken.toml"])
        #expect(broken.status == 1 && broken.stdout.isEmpty)
        #expect(broken.stderr == "lineupctl: \(try brokenMessage())\n")
        let missing = try lineupctl(["program", "check", directory + "/none.toml"])
        #expect(missing.status == 1 && missing.stderr == "lineupctl: \(directory)/none.toml: no such file\n")
    }

    /// With lineupd running, `programs` and `program show` say what it would accept: its
    /// built-ins and the files of the directory it was started with (not lineupctl's default),
    /// each checked against its board, as `session start --program` finds them.
    @Test func aRunningStationListsWhatItsOwnProgramsDirectoryOffers() throws {
        // The fixtures, and a program whose first step needs more stations than the board's 5.
        try study.replacingOccurrences(of: "name = \"study\"", with: "name = \"big\"")
            .replacingOccurrences(
                of: "lineup = { stations = 1, targets = 1 }", with: "lineup = { stations = 6, targets = 1 }"
            )
            .write(toFile: directory + "/big.toml", atomically: true, encoding: .utf8)
        guard let daemon = try ServingStationTests.Daemon(speed: 30, extra: ["--programs", directory]) else { return }
        defer { if daemon.process.isRunning { _ = daemon.terminate() } }
        #expect(daemon.waitReady(dogs: ["Aino"]))
        let env = ["LINEUP_SOCKET": daemon.socket]

        let listed = try lineupctl(["programs"], environment: env)
        #expect(listed.status == 0 && listed.stderr.isEmpty, "\(listed.stderr)")
        let lines = listed.stdout.split(separator: "\n").map(String.init)
        // Header, rule, four built-ins, four files, and where the list comes from.
        #expect(lines.count == 11, "\(listed.stdout)")
        #expect(lines.last == "(what lineupd on \(daemon.socket) accepts; its programs directory: \(directory))")
        let club = try #require(lines.first { $0.hasPrefix("club ") })
        #expect(
            club.contains(directory + "/club.toml")
                && club.hasSuffix("Scent discrimination (after Wise Nose and the study)"))
        let broken = try #require(lines.first { $0.hasPrefix("broken ") })
        #expect(broken.hasSuffix("DOES NOT LOAD: " + (try brokenMessage())), "\(broken)")
        let big = try #require(lines.first { $0.hasPrefix("big ") })
        #expect(big.contains("(not offered: \(directory)/big.toml: phases[0].steps[0].lineup.stations:"), "\(big)")
        #expect(
            lines.contains {
                $0.hasPrefix("study ") && $0.contains("(not offered: lineupd uses the built-in study first)")
            })

        let json = try lineupctl(["programs", "--json"], environment: env)
        let entries = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        #expect(
            entries.map { $0["name"] as? String } == [
                "study", "research-5-station", "olfactometer-rig", "threshold", "big", "broken", "club", "study",
            ])
        #expect(entries[6]["phases"] as? Int == 3 && entries[6]["steps"] as? Int == 6)

        // `program show` finds what the station would load; what it would refuse is one line.
        let shown = try lineupctl(["program", "show", "club"], environment: env)
        #expect(shown.status == 0 && shown.stderr.isEmpty, "\(shown.stderr)")
        #expect(shown.stdout.hasPrefix("club: ") && shown.stdout.contains("From \(directory)/club.toml;"))
        for (name, message) in [
            ("broken", "lineupd on \(daemon.socket) would refuse broken: \(try brokenMessage())"),
            ("big", "lineupd on \(daemon.socket) would refuse big: \(directory)/big.toml: phases[0].steps[0]"),
            (
                "nope",
                "lineupd on \(daemon.socket) offers no program named \"nope\" (it offers: study, research-5-station, olfactometer-rig, threshold, club;"
            ),
        ] {
            let refused = try lineupctl(["program", "show", name], environment: env)
            #expect(refused.status == 1 && refused.stdout.isEmpty)
            #expect(refused.stderr.split(separator: "\n").count == 1, "\(refused.stderr)")
            #expect(refused.stderr.hasPrefix("lineupctl: " + message), "\(refused.stderr)")
        }
        // The station does take what the list offers, and refuses what it says it would.
        let client = daemon.client
        _ = try client.startSession(SessionRequest(dog: "Aino", program: "club", step: "indicate/1", mode: .trainerLed))
        try client.endSession(suggestions: nil)
        #expect(throws: ControlClientError.self) {
            _ = try client.startSession(
                SessionRequest(dog: "Aino", program: "big", step: "indicate/1", mode: .trainerLed))
        }

        // --programs DIR still checks a folder here, without asking the station.
        let other = directory + "/other"
        try FileManager.default.createDirectory(atPath: other, withIntermediateDirectories: true)
        let offline = try lineupctl(["programs", "--programs", other], environment: env)
        #expect(offline.status == 0 && !offline.stdout.contains("club") && !offline.stdout.contains("lineupd on"))
        let both = try lineupctl(["programs", "--programs", other, "--socket", daemon.socket])
        #expect(both.status != 0 && both.stderr.contains("not both"), "\(both.stderr)")

        // With the station gone, the defaults are read, and the list says so; a socket named
        // on the command line must answer.
        #expect(daemon.terminate().status == 0)
        let unasked = try lineupctl(["programs"], environment: env)
        #expect(unasked.status == 0 && !unasked.stdout.contains("club"))
        #expect(
            unasked.stdout.hasSuffix(
                "(the built-in programs and the default directory, not asked of lineupd: lineupd is not running (no socket at \(daemon.socket)))\n"
            ), "\(unasked.stdout)")
        let named = try lineupctl(["programs", "--socket", daemon.socket])
        #expect(named.status == 1 && named.stderr.contains("lineupd is not running"), "\(named.stderr)")
    }

    /// docs/programs.md shows an example file and what `program show` prints for it: both true.
    @Test func theDocumentedExampleLoadsAndShowsAsDocumented() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let doc = try String(contentsOf: root.appendingPathComponent("docs/programs.md"), encoding: .utf8)
        let file = try #require(ReadmeExamplesTests.files(in: doc).first)
        #expect(file.name == "my-program.toml")
        try file.content.write(toFile: directory + "/" + file.name, atomically: true, encoding: .utf8)
        let check = try lineupctl(["program", "check", directory + "/" + file.name, "--stations", "5"])
        #expect(check.stdout == "ok: my-program, 2 phases, 2 steps\n", "\(check.stderr)")
        let shown = try lineupctl(["program", "show", directory + "/" + file.name])
        let documented = try #require(
            doc.components(separatedBy: "```text\n").last?.components(separatedBy: "```").first)
        #expect(shown.stdout.contains(documented), "docs/programs.md:\n\(documented)\nprinted:\n\(shown.stdout)")
    }
}
