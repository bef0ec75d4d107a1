import Foundation
import LabStore
import PostgresNIO
import SessionLog
import StationControl
import Testing

/// A sample's limits counted over the lab, on a real PostgreSQL (TestServer) and a real
/// lineupd: station B pulls the uses the lab's other stations made of a shared sample, logs
/// them, and refuses a session start that would pass the sample's limit, naming both parts;
/// a per-dog limit the same across a recorded merge of two dogs; a second identical pull writes
/// nothing; B keeps its last counts offline and across a restart.
@Suite(.serialized, .ownThreads) struct LabUsesTests {
    /// A station's log: the samples, and each dog with one session of `trials` trials, each
    /// laying out the dog's sample as the target beside a blank.
    func stationLog(
        samples: [SampleRecord], dogs: [(dog: DogRecord, sample: SampleRecord, trials: Int)]
    ) throws -> (directory: String, path: String) {
        let directory = NSTemporaryDirectory() + "lab-uses-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = "\(directory)/lineup.db"
        let log = try SessionLog(path: path)
        try log.append(samples + dogs.map(\.dog))
        for (dog, sample, trials) in dogs {
            let session = SessionRecord(dogId: dog.id, mode: .automated, station: "pi")
            var rows: [any AppendableRecord] = [session]
            for number in 1...trials {
                rows.append(
                    TrialRecord(
                        sessionId: session.id, number: number,
                        layout: [
                            StationSlot(station: 1, sampleId: sample.id, kind: .target),
                            StationSlot(station: 2, sampleId: nil, kind: .blank),
                        ], outcome: .hit, indicatedStation: 1, latencyNs: 2_000_000_000, started: .now(),
                        ended: .now()))
            }
            try log.append(rows)
        }
        return (directory, path)
    }

    func sync(_ path: String, into lab: TestServer.Lab) async throws {
        let store = try await LabStore.connect(lab.station)
        let report = try await StationSync(
            reader: try SessionLog.openReader(path: path, everything: true), store: store
        )
        .run()
        await store.close()
        #expect(report.complete && report.behindRows == 0)
    }

    /// A real lineupd serving the log's socket, as a station runs it.
    final class Station {
        let process = Process()
        let socket: String
        let db: String
        let client: ControlClient

        init(directory: String, db: String) throws {
            let lineupd = try #require(builtProduct("lineupd"), "lineupd is not built: run `swift build` first")
            socket = "\(directory)/control.sock"
            self.db = db
            process.executableURL = URL(fileURLWithPath: lineupd)
            process.arguments = [
                "--simulate", "--serve", "--socket", socket, "--db", db, "--speed", "30", "--no-realtime",
            ]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            client = ControlClient(path: socket, timeout: 5)
            // Bounded wait for the process to start serving (not a timing assumption of the test).
            let until = Date().addingTimeInterval(20)
            while (try? client.status()) == nil && Date() < until { usleep(20_000) }
        }

        func stop() {
            guard process.isRunning else { return }
            process.terminate()
            process.waitUntilExit()
        }

        /// Starts a block of `trials` on phase-1/1 (a target beside blanks, every trial) with
        /// the one sample and ends it before any trial runs; nil when it started, else why not.
        func refusal(dog: String, sample: String, trials: Int) -> String? {
            do {
                _ = try client.startSession(
                    SessionRequest(
                        dog: dog, program: "research-5-station", step: "phase-1/1", trials: trials, samples: [sample]))
                try client.endSession(suggestions: nil)
                return nil
            } catch {
                return "\(error)"
            }
        }

        /// The rows of the lab's counts in the log.
        func labRows() throws -> Int {
            try SessionLog.openReader(path: db, everything: true).read { db in
                try Int.fetchOne(db, sql: "SELECT count(*) FROM lab_sample_uses") ?? -1
            }
        }
    }

    struct UsesPulled: Decodable {
        var dogsAdded: [String]
        var usesLogged: Int
        var usesUnchanged: Int
        var usesAsOfWallNs: Int64?
        var error: String?
    }

    func pull(_ station: Station, file: String) throws -> (SyncRun, UsesPulled?) {
        let run = try runSync([
            "--pull-registry", "--log", station.db, "--connection", file, "--socket", station.socket, "--json",
        ])
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return (run, try? decoder.decode(UsesPulled.self, from: Data(run.stdout.utf8)))
    }

    @Test func aSampleUsedOnAnotherStationCountsAgainstItsMaxUsesOnceTheStationPulls() async throws {
        guard let server = try await TestServer.startOrSkip("lab uses: max_uses over two stations") else { return }
        let lab = try await server.makeLab()
        let shared = SampleRecord(label: "T-1", kind: .target, maxUses: 10)
        // Station A: Ada met T-1 in 6 trials. Station B: Rex in 3, also synced, which B's own
        // log counts: the lab's part is the other stations' only.
        let a = try stationLog(samples: [shared], dogs: [(DogRecord(name: "Ada"), shared, 6)])
        let b = try stationLog(samples: [shared], dogs: [(DogRecord(name: "Rex"), shared, 3)])
        defer {
            try? FileManager.default.removeItem(atPath: a.directory)
            try? FileManager.default.removeItem(atPath: b.directory)
        }
        try await sync(a.path, into: lab)
        try await sync(b.path, into: lab)
        var station = try Station(directory: b.directory, db: b.path)
        defer { station.stop() }
        let file = try lab.stationFile(in: b.directory)

        // An older lineup-sync's registry-add (no labUsesFollow) is refused in one line.
        do {
            _ = try station.client.send(RegistryAddition(dogs: [RegistryDog(id: UUID().uuidString, name: "Old")]))
            Issue.record("an older lineup-sync's registry-add was taken")
        } catch {
            #expect("\(error)".contains("registry-add from a lineup-sync older than this lineupd"), "\(error)")
        }

        // Never pulled: its own 3 uses only, so 2 more fit under 10 (as before).
        #expect(station.refusal(dog: "Rex", sample: "T-1", trials: 2) == nil)

        let (first, report) = try pull(station, file: file)
        #expect(first.status == 0, "\(first.stdout)\(first.stderr)")
        // T-1 in all (6 on A), and Ada, pulled now, with her 6 there.
        #expect(report?.usesLogged == 2 && report?.usesAsOfWallNs != nil, "\(first.stdout)")
        #expect(try station.labRows() == 2)

        // 3 here + 6 on A: the second trial would be T-1's eleventh use.
        let refused = try #require(station.refusal(dog: "Rex", sample: "T-1", trials: 2))
        #expect(
            refused.contains(
                "trial 2: 1 different target samples needed but only 0 within their usage limits (T-1: used 10 times (4 here, 6 on other stations as of "
            ), "\(refused)")
        #expect(refused.hasSuffix("), max_uses 10): register more samples or raise the limits"), "\(refused)")
        #expect(station.refusal(dog: "Rex", sample: "T-1", trials: 1) == nil)

        let lineupctl = try #require(builtProduct("lineupctl"), "lineupctl is not built: run `swift build` first")
        let show = Process()
        show.executableURL = URL(fileURLWithPath: lineupctl)
        show.arguments = ["samples", "show", "T-1", "--db", b.path]
        let out = Pipe()
        show.standardOutput = out
        try show.run()
        let shown = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        show.waitUntilExit()
        #expect(shown.contains("Used        9 trial(s): 3 here, 6 on other stations as of "), "\(shown)")
        #expect(shown.contains("(max_uses 10)\n"), "\(shown)")
        #expect(shown.contains("  Ada: 6 trial(s): 0 here; 6 on other stations as of "), "\(shown)")
        #expect(shown.contains("  Rex: 3 trial(s), last "), "\(shown)")

        // The same pull again says what the log says already: no row.
        let (again, same) = try pull(station, file: file)
        #expect(again.status == 0, "\(again.stdout)\(again.stderr)")
        #expect(same?.usesLogged == 0 && same?.usesUnchanged == 2, "\(again.stdout)")
        #expect(try station.labRows() == 2)

        // Offline (the store stopped) and lineupd restarted: the pull fails, the last counts stand.
        try server.stop()
        station.stop()
        station = try Station(directory: b.directory, db: b.path)
        let (offline, _) = try pull(station, file: file)
        #expect(offline.status == 1, "\(offline.stdout)\(offline.stderr)")
        #expect(try station.labRows() == 2)
        let still = try #require(station.refusal(dog: "Rex", sample: "T-1", trials: 2))
        #expect(still.contains("(T-1: used 10 times (4 here, 6 on other stations as of "), "\(still)")
    }

    @Test func aPerDogLimitCountsTheDogTheLabMergedIntoAndNotOnceTheMergeIsUndone() async throws {
        guard let server = try await TestServer.startOrSkip("lab uses: max_uses_per_dog across a merge") else { return }
        let lab = try await server.makeLab()
        let shared = SampleRecord(label: "T-2", kind: .target, maxUsesPerDog: 4)
        let rexA = DogRecord(name: "Rex")
        let rexB = DogRecord(name: "Rex")
        let a = try stationLog(samples: [shared], dogs: [(rexA, shared, 3)])
        let b = try stationLog(samples: [shared], dogs: [(rexB, shared, 1)])
        defer {
            try? FileManager.default.removeItem(atPath: a.directory)
            try? FileManager.default.removeItem(atPath: b.directory)
        }
        try await sync(a.path, into: lab)
        try await sync(b.path, into: lab)
        let station = try Station(directory: b.directory, db: b.path)
        defer { station.stop() }
        let file = try lab.stationFile(in: b.directory)

        // Two dogs named Rex: A's Rex's trials are not B's Rex's.
        let (first, _) = try pull(station, file: file)
        #expect(first.status == 0, "\(first.stdout)\(first.stderr)")
        #expect(station.refusal(dog: "Rex", sample: "T-2", trials: 3) == nil)

        // The lab records that they are one dog: B's Rex has met T-2 3 times on A.
        let owner = try await LabStore.connect(lab.owner)
        try await owner.execute(
            PostgresQuery(unsafeSQL: "CREATE ROLE registrar_k LOGIN PASSWORD 'pw-k' IN ROLE \(LabSchema.registrarRole)")
        )
        await owner.close()
        let store = try await LabStore.connect(
            lab.server.connection(user: "registrar_k", password: "pw-k", database: "lab"))
        let registry = LabRegistry(store: store)
        let merge = try await registry.mergeDogs(
            keep: rexA.id.uuidString.lowercased(), merged: rexB.id.uuidString.lowercased(), why: "one microchip")
        let (merged, _) = try pull(station, file: file)
        #expect(merged.status == 0, "\(merged.stdout)\(merged.stderr)")
        let refused = try #require(station.refusal(dog: "Rex", sample: "T-2", trials: 1))
        #expect(refused.contains("(T-2: met 4 times by this dog (1 here, 3 on other stations as of "), "\(refused)")
        #expect(refused.contains("), max_uses_per_dog 4)"), "\(refused)")

        // Undone: two dogs again, and B's Rex's count there falls back to 0 (a row says so).
        _ = try await registry.undoMerge(merge, why: "two chips after all")
        await store.close()
        let rows = try station.labRows()
        let (undone, report) = try pull(station, file: file)
        #expect(undone.status == 0, "\(undone.stdout)\(undone.stderr)")
        #expect(report?.usesLogged == 1, "\(undone.stdout)")
        #expect(try station.labRows() == rows + 1)
        #expect(station.refusal(dog: "Rex", sample: "T-2", trials: 3) == nil)

        // A store an older lineup-sync migrated (here: its view dropped) is named in one line.
        let owner2 = try await LabStore.connect(lab.owner)
        try await owner2.execute("DROP VIEW public.lab_sample_uses")
        await owner2.close()
        let (older, lacking) = try pull(station, file: file)
        #expect(older.status == 1, "\(older.stdout)\(older.stderr)")
        #expect(
            lacking?.error?.contains("lacks migration v5-sample-uses-by-station-and-dog") == true, "\(older.stdout)")
    }
}
