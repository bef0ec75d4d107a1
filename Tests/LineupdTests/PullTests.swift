import Foundation
import ReadingRows
import SessionLog
import Testing

/// `lineupctl pull` against simulated stations: ssh is played by a script that drops the host
/// and runs the remote command line here, with `$LINEUP_DB` set to that host's log, as a
/// station's shell would find it. Pulled twice, each row is there once; a host that fails
/// says so in one line and the others are still merged.
@Suite(.serialized, .ownThreads) struct PullTests {
    let directory: String
    let scratch: String
    let ssh: String
    let built: String

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("pull-\(UUID().uuidString)").path
        scratch = directory + "/tmp"
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        built = root.appendingPathComponent(".build/debug/lineupctl").path
        ssh = directory + "/ssh"
        try """
        #!/bin/sh
        # ssh's part: options (-o X, -i KEY) skipped, an unknown host unreachable, the command line
        # run by a shell with the host's own log as its default.
        while [ "${1#-}" != "$1" ]; do shift 2; done
        host="$1"; shift
        if [ ! -f "\(directory)/$host.db" ]; then
            echo "ssh: Could not resolve hostname $host: Name or service not known" >&2
            exit 255
        fi
        LINEUP_DB="\(directory)/$host.db" exec sh -c "$*"
        """.write(toFile: ssh, atomically: true, encoding: .utf8)
        chmod(ssh, 0o755)
    }

    /// A station's log: a simulated block of `trials` trials, with its samples and events.
    func station(_ path: String, trials: Int, seed: Int) async throws {
        let result = try await lineupdAwaited([
            "--simulate", "--db", path, "--trials", "\(trials)", "--seed", "\(seed)", "--speed", "30",
            "--no-realtime", "--device", "null",
        ])
        #expect(result.status == 0, "\(result.stderr)")
    }

    struct Counts: Equatable, CustomStringConvertible {
        var dogs = 0
        var samples = 0
        var sessions = 0
        var trials = 0
        var events = 0
        var description: String {
            "\(dogs) dogs, \(samples) samples, \(sessions) sessions, \(trials) trials, \(events) events"
        }
    }

    func counts(_ path: String) throws -> Counts {
        let reader = try SessionLog.openReader(path: path)
        return Counts(
            dogs: try reader.dogs().count, samples: try reader.samples().count, sessions: try reader.sessions().count,
            trials: try reader.trials().count, events: try reader.eventCount(LogFilter()))
    }

    func pull(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        try lineupctl(["pull"] + arguments, environment: ["TMPDIR": scratch])
    }

    @Test func twoStationsPulledTwiceHoldEachRowOnce() async throws {
        // The two stations' blocks are independent: they run side by side.
        async let pi1: Void = station(directory + "/pi-1.db", trials: 3, seed: 1)
        async let pi2: Void = station(directory + "/pi-2.db", trials: 2, seed: 2)
        _ = try await (pi1, pi2)
        let one = try counts(directory + "/pi-1.db")
        let two = try counts(directory + "/pi-2.db")
        #expect(one.events > 0 && two.events > 0 && one.samples > 0)
        let lab = directory + "/lab.db"

        // pi-9 does not answer: one line for it, the two stations merged all the same.
        let first = try pull(["pi-1", "pi-9", "pi-2", "--into", lab, "--ssh", ssh, "--remote-lineupctl", built])
        #expect(first.status == 1)
        #expect(
            first.stderr
                == "lineupctl: pi-9: cannot reach it over ssh: ssh: Could not resolve hostname pi-9: Name or service not known\n"
        )
        let lines = first.stdout.split(separator: "\n")
        #expect(lines.count == 2 && lines[0].hasPrefix("pi-1: station ") && lines[1].hasPrefix("pi-2: station "))
        // The same virtual dog and sample labels on both stations: matched, not doubled.
        let expected = Counts(
            dogs: 1, samples: one.samples, sessions: one.sessions + two.sessions, trials: one.trials + two.trials,
            events: one.events + two.events)
        #expect(try counts(lab) == expected)

        // Again, through an ssh command with options: nothing new.
        let again = try pull([
            "pi-1", "pi-2", "--into", lab, "--ssh", "\(ssh) -o BatchMode=yes", "--remote-lineupctl", built, "--json",
        ])
        #expect(again.status == 0 && again.stderr.isEmpty, "\(again.stderr)")
        let pulled = try #require(
            try JSONSerialization.jsonObject(with: Data(again.stdout.utf8)) as? [[String: Any]])
        #expect(pulled.map { $0["host"] as? String } == ["pi-1", "pi-2"])
        for entry in pulled {
            let merged = try #require(entry["merged"] as? [String: Any])
            #expect(merged["sessions"] as? Int == 0 && merged["trials"] as? Int == 0 && merged["events"] as? Int == 0)
        }
        #expect(try counts(lab) == expected)

        // A log elsewhere on the station, at a path the remote shell must be given quoted.
        let odd = directory + "/station three's log.db"
        try await station(odd, trials: 1, seed: 3)
        let three = try counts(odd)
        let elsewhere = try pull([
            "pi-1", "--into", lab, "--ssh", ssh, "--remote-lineupctl", built, "--remote-db", odd,
        ])
        #expect(elsewhere.status == 0, "\(elsewhere.stderr)")
        #expect(elsewhere.stdout.hasPrefix("pi-1:\(odd): station "))
        #expect(try counts(lab).sessions == expected.sessions + three.sessions)
        #expect(try counts(lab).trials == expected.trials + three.trials)

        // Nothing left behind, here or on the "station" (both used $TMPDIR).
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch).isEmpty)
    }

    @Test func aStationWithoutLineupctlOrLogSaysWhich() async throws {
        try await station(directory + "/pi-1.db", trials: 1, seed: 4)
        let lab = directory + "/lab.db"
        let missing = try pull(["pi-1", "--into", lab, "--ssh", ssh, "--remote-lineupctl", directory + "/nothing"])
        #expect(missing.status == 1 && missing.stdout.isEmpty)
        let lines = missing.stderr.split(separator: "\n")
        #expect(lines.count == 1)
        #expect(
            lines.first?.hasPrefix(
                "lineupctl: pi-1: \(directory)/nothing is not found or cannot run there (give its path with --remote-lineupctl): "
            ) == true, "\(missing.stderr)")
        let noLog = try pull([
            "pi-1", "--into", lab, "--ssh", ssh, "--remote-lineupctl", built, "--remote-db", directory + "/none.db",
        ])
        #expect(noLog.status == 1)
        #expect(
            noLog.stderr
                == "lineupctl: pi-1: lineupctl backup failed there (exit status 1): lineupctl: no session log at \(directory)/none.db (use --db PATH or LINEUP_DB)\n"
        )
        // Nothing came back: no lab log was made.
        #expect(!FileManager.default.fileExists(atPath: lab))
        let nowhere = try pull(["pi-1", "--into", directory + "/no/lab.db", "--ssh", ssh])
        #expect(nowhere.status == 1)
        #expect(nowhere.stderr == "lineupctl: cannot create \(directory)/no/lab.db: No such file or directory\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch).isEmpty)
    }

    @Test func backupToStandardOutputIsTheLog() async throws {
        try await station(directory + "/pi-1.db", trials: 1, seed: 5)
        let copy = directory + "/copy.db"
        FileManager.default.createFile(atPath: copy, contents: nil)
        let out = try #require(FileHandle(forWritingAtPath: copy))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: built)
        process.arguments = ["backup", "--db", directory + "/pi-1.db", "-"]
        process.environment = ["TMPDIR": scratch]
        process.standardOutput = out
        try process.run()
        process.waitUntilExit()
        try out.close()
        #expect(process.terminationStatus == 0)
        #expect(try counts(copy) == (try counts(directory + "/pi-1.db")))
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch).isEmpty)
        let json = try lineupctl(["backup", "--db", directory + "/pi-1.db", "--json", "-"])
        #expect(json.status == 1 && json.stdout.isEmpty)
        #expect(json.stderr == "lineupctl: --json does not go with -: standard output carries the copy\n")
    }
}
