import Figures
import Foundation
import LabStore
import SessionLog
import Testing
import TrainingEngine

/// `stats --guesses --lab` over three stations' guesses gives the figures the fixture was written
/// for (that it prints, byte for byte, what `stats --guesses --db` prints on the same logs merged,
/// with every selection, is ReadingParityTests'), and `export --what guesses --lab` the merged
/// logs' bytes.
@Suite(.serialized, .ownThreads) struct LabGuessTests {
    /// One station's log, written record by record with fixed ids and times, its handler's
    /// guesses straight into `handler_guess` as lineupd's `guess` request writes them.
    struct GuessingStation {
        let log: SessionLog
        let path: String
        let station: Int
        let target: SampleRecord
        let control: SampleRecord
        var made = 0
        var dogs: [String: UUID] = [:]
        var handlers: [String: UUID] = [:]

        init(path: String, station: Int, prefix: String) throws {
            log = try SessionLog(path: path)
            self.path = path
            self.station = station
            target = SampleRecord(
                id: Self.id(station, 1), label: "\(prefix)T", kind: .target, time: Self.at(0))
            control = SampleRecord(
                id: Self.id(station, 2), label: "\(prefix)C", kind: .control, time: Self.at(0))
            made = 2
            try log.append([target, control])
        }

        /// Ids fixed by station and order, so every run orders the rows alike.
        static func id(_ station: Int, _ n: Int) -> UUID {
            UUID(uuidString: String(format: "%08X-0000-4000-8000-%012X", station, n))!
        }

        static func at(_ ns: Int64) -> LogTime {
            LogTime(monoNs: 1_000_000_000_000 + ns, wallNs: 1_740_819_600_000_000_000 + ns)
        }

        mutating func nextId() -> UUID {
            made += 1
            return Self.id(station, made)
        }

        /// One guessed trial: the target's station (nil: none), where the dog indicated (2 s
        /// into the search), the guess and whether it came after the indication (3 s in) rather
        /// than before the start (1 s before).
        struct Trial {
            var target: Int?
            var indicated: [Int]
            var guess: Int?
            var late = false
        }

        /// A five-station session starting `startNs` after the first (its trials a minute
        /// apart); the trials' ids in order.
        @discardableResult
        mutating func session(
            dog: String, handler: String?, mode: TrainingMode, step: String, startNs: Int64, _ trials: [Trial]
        ) throws -> [UUID] {
            var records: [any AppendableRecord] = []
            if dogs[dog] == nil {
                let record = DogRecord(id: nextId(), name: dog, time: Self.at(0))
                dogs[dog] = record.id
                records.append(record)
            }
            if let handler, handlers[handler] == nil {
                let record = HandlerRecord(id: nextId(), code: handler, time: Self.at(0))
                handlers[handler] = record.id
                records.append(record)
            }
            let session = SessionRecord(
                id: nextId(), dogId: dogs[dog]!, handlerId: handler.flatMap { handlers[$0] },
                phase: "2 discrimination", phaseSteps: 3, step: step, mode: mode, station: "station \(station)",
                time: Self.at(startNs))
            records.append(session)
            try log.append(records)
            var ids: [UUID] = []
            for (index, spec) in trials.enumerated() {
                let started = startNs + Int64(index + 1) * 60_000_000_000
                let slots = (1...5).map { s in
                    let isTarget = s == spec.target
                    let indicated = spec.indicated.contains(s)
                    return StationSlot(
                        station: s, sampleId: isTarget ? target.id : control.id, kind: isTarget ? .target : .control,
                        seen: StationSeen(
                            visited: true, indicated: indicated, firstIndicationNs: indicated ? 2_000_000_000 : nil,
                            sniffs: indicated ? 0 : 1, dwellNs: 500_000_000))
                }
                let falseAlert = spec.indicated.contains { $0 != spec.target }
                let outcome: TrialOutcome =
                    falseAlert
                    ? .falseAlert : spec.target == nil ? .correctRejection : spec.indicated.isEmpty ? .miss : .hit
                let trial = TrialRecord(
                    id: nextId(), sessionId: session.id, number: index + 1, layout: slots, outcome: outcome,
                    indicatedStation: spec.indicated.first, latencyNs: spec.indicated.isEmpty ? nil : 2_000_000_000,
                    started: Self.at(started), ended: Self.at(started + 10_000_000_000))
                if let guess = spec.guess {
                    _ = try log.recordGuess(
                        HandlerGuess(
                            id: nextId(), sessionId: session.id, trialId: trial.id, trialNumber: index + 1,
                            station: guess, time: Self.at(started + (spec.late ? 3_000_000_000 : -1_000_000_000))))
                }
                try log.append([trial])
                ids.append(trial.id)
            }
            return ids
        }
    }

    /// Targets at stations 1 to 5 in turn, the dog finding each; the handler guessing the
    /// target in the first `right` trials and the next station after it in the others.
    static func found(_ count: Int, right: Int) -> [GuessingStation.Trial] {
        (0..<count).map { i in
            let target = i % 5 + 1
            return .init(target: target, indicated: [target], guess: i < right ? target : target % 5 + 1)
        }
    }

    /// Three stations: A (handlers H1 and H2, a trial corrected to a miss and one to aborted, a
    /// late guess, a false alert at the guess in a trial without a target), B (handler H1 too:
    /// one code on two stations; its first session starts when A's does, so their ids order
    /// them; an automated session without guesses) and C (no handler code).
    func stationLogs(in directory: String) throws -> [String] {
        let minute: Int64 = 60_000_000_000
        var a = try GuessingStation(path: "\(directory)/station-1.db", station: 1, prefix: "A-")
        let aTrials = try a.session(
            dog: "A-Rex", handler: "H1", mode: .doubleBlind, step: "step 1", startNs: 0,
            Self.found(10, right: 6) + [
                .init(target: 3, indicated: [3], guess: 3, late: true),
                .init(target: nil, indicated: [2], guess: 2),
            ])
        // A hit whose guess was right, corrected to a miss: still one guess, still right. A
        // trial whose guess was wrong, corrected to aborted: its guess drops out.
        let correction = try a.log.correctTrial(
            aTrials[0].uuidString.lowercased(), outcome: .miss, indicatedStation: nil, reason: "video: no hold")
        // That correction corrected in turn (back to a hit at the target, station 1): the guess
        // follows down the chain of corrections, still one guess, still right.
        _ = try a.log.correctTrial(
            correction.id.uuidString.lowercased(), outcome: .hit, indicatedStation: 1,
            reason: "second look: held after all")
        _ = try a.log.correctTrial(
            aTrials[6].uuidString.lowercased(), outcome: .aborted, indicatedStation: nil, reason: "lid open")
        var lastH2 = Self.found(6, right: 4)
        lastH2[5].indicated = [lastH2[5].guess!]
        try a.session(dog: "A-Rex", handler: "H2", mode: .doubleBlind, step: "step 1", startNs: 60 * minute, lastH2)

        var b = try GuessingStation(path: "\(directory)/station-2.db", station: 2, prefix: "B-")
        try b.session(
            dog: "B-Kato", handler: "H1", mode: .doubleBlind, step: "step 2", startNs: 0, Self.found(8, right: 2))
        try b.session(
            dog: "B-Kato", handler: "H1", mode: .automated, step: "step 2", startNs: 120 * minute,
            Self.found(5, right: 0).map { .init(target: $0.target, indicated: $0.indicated, guess: nil) })

        var c = try GuessingStation(path: "\(directory)/station-3.db", station: 3, prefix: "C-")
        try c.session(
            dog: "C-Mila", handler: nil, mode: .doubleBlind, step: "step 1", startNs: 30 * minute,
            (0..<5).map { i in .init(target: i % 5 + 1, indicated: [i % 5 + 1], guess: 1) })
        return [a.path, b.path, c.path]
    }

    /// The figures `--json` gives, as far as this test reads them.
    struct Figures: Decodable, Equatable {
        var group: String
        var guesses: Int
        var targetAbsentGuesses: Int
        var hits: Int
        var lateGuesses: Int
        var falseAlerts: Int
        var falseAlertsAtGuess: Int
    }

    func figures(_ json: String) throws -> [Figures] {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return try decoder.decode([Figures].self, from: Data(json.utf8))
    }

    /// The three stations' logs synced into a new store of `server` and merged by `lineupctl
    /// merge`: their directory, the merged log and a researcher's connection file.
    func syncedAndMerged(_ server: TestServer) async throws -> (directory: String, merged: String, conf: String) {
        let lab = try await server.makeLab()
        let reading = LabReadingTests()
        let directory = try reading.directory()
        do {
            let logs = try stationLogs(in: directory)
            for path in logs { try await SyncedAndMerged.sync(path, into: lab) }
            let merged = "\(directory)/merged.db"
            let merge = try lineupctl(["merge"] + logs + ["--into", merged])
            guard merge.status == 0 else { throw TestServerError(message: "merge: \(merge.stderr)") }
            return (directory, merged, reading.researcherFile(lab, in: directory))
        } catch {
            try? FileManager.default.removeItem(atPath: directory)
            throw error
        }
    }

    /// The selections of the guesses' fixture, each keeping some guesses and leaving some out.
    static func selections(merged: String) throws -> [[String]] {
        // By its whole id: the fixture's ids share their first 8 characters within a station.
        let h2Session = try sqlite(
            merged, "SELECT s.id FROM session s JOIN handler h ON h.id = s.handler_id WHERE h.code = 'H2'")
        return [
            ["--dog", "A-Rex"], ["--dog", "b-kato"], ["--handler", "H1"], ["--handler", "H2"],
            ["--session", h2Session], ["--mode", "double-blind"], ["--mode", "automated"],
            ["--step", "2 discrimination/step 2"], ["--since", "2025-03-01T09:30Z"], ["--until", "2025-03-01T09:08Z"],
            ["--dog", "A-Rex", "--handler", "H1", "--until", "2025-03-01T10:00Z"],
        ]
    }

    @Test func guessesOnTheLabAreTheFixturesFigures() async throws {
        guard let server = try await TestServer.startOrSkip("guessesOnTheLabAreTheFixturesFigures") else {
            return
        }
        let (directory, _, conf) = try await syncedAndMerged(server)
        defer { try? FileManager.default.removeItem(atPath: directory) }

        // Not an empty agreement: the figures are those the fixture was written for.
        let all = try lineupctl(["stats", "--guesses", "--json", "--lab", conf])
        #expect(all.status == 0, "\(all.stderr)")
        #expect(
            try figures(all.stdout) == [
                // A's 10 found (6 right; the one corrected to aborted, wrong, dropped), its late
                // guess, its trial without a target (a false alert at the guess), and B's 8 (2 right).
                Figures(
                    group: "H1", guesses: 9 + 1 + 8, targetAbsentGuesses: 1, hits: 6 + 2, lateGuesses: 1,
                    falseAlerts: 1, falseAlertsAtGuess: 1),
                Figures(
                    group: "(no handler code)", guesses: 5, targetAbsentGuesses: 0, hits: 1, lateGuesses: 0,
                    falseAlerts: 0, falseAlertsAtGuess: 0),
                Figures(
                    group: "H2", guesses: 6, targetAbsentGuesses: 0, hits: 4, lateGuesses: 0, falseAlerts: 1,
                    falseAlertsAtGuess: 1),
            ])

        // Every selection on the store against the merged logs: ReadingParityTests.
        // The filters narrow: each chooses some groups' guesses and not others.
        let h2 = try figures(lineupctl(["stats", "--guesses", "--json", "--handler", "H2", "--lab", conf]).stdout)
        #expect(h2.map(\.group) == ["H2"])
        let byKato = try figures(
            lineupctl(["stats", "--guesses", "--json", "--by", "session", "--dog", "B-Kato", "--lab", conf]).stdout)
        #expect(byKato.map(\.guesses) == [8])
        let automated = try lineupctl(["stats", "--guesses", "--mode", "automated", "--lab", conf])
        #expect(automated.stdout.contains("none: no handler's guess was logged in these trials"), "\(automated.stdout)")
        let since = try figures(
            lineupctl(["stats", "--guesses", "--json", "--since", "2025-03-01T09:30Z", "--lab", conf]).stdout)
        #expect(since.map(\.group) == ["(no handler code)", "H2"], "\(since)")

        // A word neither source has is refused alike, in one line.
        let unknown = try lineupctl(["stats", "--guesses", "--handler", "H9", "--lab", conf])
        #expect(unknown.status == 1 && unknown.stdout.isEmpty, "\(unknown.stderr)")
        #expect(unknown.stderr.contains("--handler H9") && unknown.stderr.split(separator: "\n").count == 1)
    }

    /// `export --what guesses --lab` writes the merged logs' bytes: the store's rows through the
    /// log's writer, each guess's computed columns by the same code.
    @Test func guessExportOfTheLabEqualsTheMergedLogs() async throws {
        guard let server = try await TestServer.startOrSkip("guessExportOfTheLabEqualsTheMergedLogs") else { return }
        let (directory, merged, conf) = try await syncedAndMerged(server)
        defer { try? FileManager.default.removeItem(atPath: directory) }

        let filters: [[String]] = [
            [], ["--handler", "H1"], ["--dog", "A-Rex", "--until", "2025-03-01T10:00Z"], ["--mode", "automated"],
            ["--step", "2 discrimination/step 2", "--since", "2025-03-01T09:05Z"],
        ]
        for filter in filters {
            for format in ExportFormat.allCases {
                let arguments = ["export", "--what", "guesses", "--format", format.rawValue] + filter
                let onLog = try exported(arguments + ["--db", merged])
                let onLab = try exported(arguments + ["--lab", conf])
                #expect(onLog.status == 0 && onLab.status == 0, "\(arguments): \(onLog.stderr) \(onLab.stderr)")
                #expect(onLab.stderr.isEmpty, "\(arguments): \(onLab.stderr)")
                #expect(onLab.stdout == onLog.stdout, "\(arguments)")
            }
        }
        // Not an empty agreement: every guess of the three stations, the one corrected to
        // aborted and the late one included; the filters narrow.
        let whole = try exported(["export", "--what", "guesses", "--lab", conf]).stdout
        let lines = whole.split(separator: "\r\n").dropFirst()
        let guesses = 12 + 6 + 8 + 5
        #expect(lines.count == guesses, "\(whole)")
        #expect(lines.filter { $0.contains(",aborted,") }.count == 1)
        let h1 = try exported(["export", "--what", "guesses", "--handler", "H1", "--lab", conf]).stdout
        let h1Rows = 1 + 12 + 8
        #expect(h1.split(separator: "\r\n").count == h1Rows, "\(h1)")
        let automated = try exported(["export", "--what", "guesses", "--mode", "automated", "--lab", conf]).stdout
        #expect(automated.split(separator: "\r\n").count == 1, "\(automated)")
    }
}
