import Foundation
import LabStore
import PostgresNIO
import SessionLog
import StationControl
import Testing

/// The lab's registry on a real PostgreSQL server of the test's own: two stations each with a
/// dog named Rex stay two dogs; a merge, recorded by a registrar, makes them one; its undoing
/// makes them two again; no row is rewritten; stations and researchers may not record merges.
@Suite(.serialized, .ownThreads) struct RegistryTests {
    /// A station's log: the dogs named, each with one session of `trials` trials whose lineup
    /// holds the shared sample (made on one station, the same id on both) and a control of the
    /// station's own; the same program text on every station.
    struct Station {
        var directory: String
        var path: String
        var dogIds: [String: String]
    }

    static let program = "# the lab's study program\n"

    func station(dogs: [(name: String, trials: Int)], shared: SampleRecord) throws -> Station {
        let directory = NSTemporaryDirectory() + "lab-registry-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = "\(directory)/lineup.db"
        let log = try SessionLog(path: path)
        let program = ProgramRecord(name: "study", content: Self.program)
        let control = SampleRecord(label: "C-1", kind: .control)
        var records: [any AppendableRecord] = [program, shared, control]
        var ids: [String: String] = [:]
        var sessions: [[any AppendableRecord]] = []
        for (name, trials) in dogs {
            let dog = DogRecord(name: name)
            records.append(dog)
            ids[name] = dog.id.uuidString.lowercased()
            let session = SessionRecord(dogId: dog.id, programId: program.id, mode: .automated, station: "pi")
            var rows: [any AppendableRecord] = [session]
            for number in 1...trials {
                rows.append(
                    TrialRecord(
                        sessionId: session.id, number: number,
                        layout: [
                            StationSlot(station: 1, sampleId: shared.id, kind: .target),
                            StationSlot(station: 2, sampleId: control.id, kind: .control),
                        ], outcome: .hit, indicatedStation: 1, latencyNs: 2_000_000_000, started: .now(),
                        ended: .now()))
            }
            sessions.append(rows)
        }
        try log.append(records)
        for rows in sessions { try log.append(rows) }
        return Station(directory: directory, path: path, dogIds: ids)
    }

    func sync(_ station: Station, into lab: TestServer.Lab) async throws {
        // A station's login (the owner is refused: a station syncs with a login of its own).
        let store = try await LabStore.connect(lab.station)
        let report = try await StationSync(
            reader: try SessionLog.openReader(path: station.path, everything: true), store: store
        ).run()
        await store.close()
        #expect(report.complete && report.behindRows == 0)
    }

    /// Trials per dog, `id:count` sorted, as a researcher reads the views: by the dog each
    /// session was recorded with, or by the dog it counts as in the registry.
    func trialsByDog(_ lab: TestServer.Lab, identity: Bool) async throws -> String {
        let dog = identity ? "i.counts_as" : "s.dog_id"
        return try await value(
            """
            SELECT string_agg(dog || ':' || n, ',' ORDER BY dog) FROM (
                SELECT \(dog) AS dog, count(*) AS n FROM public.trials t
                JOIN public.sessions s ON s.id = t.session_id
                JOIN public.dog_identity i ON i.dog_id = s.dog_id GROUP BY 1) x
            """, as: lab.researcher)
    }

    /// The dog table's row count and a hash of every row, to show nothing was rewritten.
    func dogTableHash(_ lab: TestServer.Lab) async throws -> String {
        try await value(
            "SELECT count(*) || ' ' || md5(string_agg(d::text, '|' ORDER BY d.id)) FROM store.dog d", as: lab.owner)
    }

    func makeLogin(_ name: String, role: String, _ lab: TestServer.Lab) async throws -> LabConnection {
        let owner = try await LabStore.connect(lab.owner)
        try await owner.execute(
            PostgresQuery(unsafeSQL: "CREATE ROLE \(name) LOGIN PASSWORD 'pw-\(name)' IN ROLE \(role)"))
        await owner.close()
        return lab.server.connection(user: name, password: "pw-\(name)", database: "lab")
    }

    @Test func twoDogsNamedRexStayTwoUntilAMergeAndAreTwoAgainWhenItIsUndone() async throws {
        guard let server = try await TestServer.startOrSkip("registry: two dogs named Rex") else { return }
        let lab = try await server.makeLab()
        let shared = SampleRecord(label: "T-7", kind: .target, maxUses: 20)
        let a = try station(dogs: [("Rex", 3), ("Bella", 1)], shared: shared)
        let b = try station(dogs: [("Rex", 5)], shared: shared)
        defer {
            try? FileManager.default.removeItem(atPath: a.directory)
            try? FileManager.default.removeItem(atPath: b.directory)
        }
        try await sync(a, into: lab)
        try await sync(b, into: lab)
        let rexA = a.dogIds["Rex"]!
        let rexB = b.dogIds["Rex"]!
        let bella = a.dogIds["Bella"]!

        let registrar = try await makeLogin("registrar_k", role: LabSchema.registrarRole, lab)
        let store = try await LabStore.connect(registrar)
        let registry = LabRegistry(store: store)

        // Two dogs named Rex, each from its station, each counting as itself.
        let dogs = try await registry.dogs()
        let rexes = dogs.filter { $0.name == "Rex" }
        #expect(Set(rexes.map(\.id)) == [rexA, rexB])
        #expect(Set(rexes.map(\.stationId)).count == 2)
        #expect(dogs.allSatisfy { $0.countsAs == $0.id && $0.mergedInto == nil })
        let apart = [bella + ":1", rexA + ":3", rexB + ":5"].sorted().joined(separator: ",")
        #expect(try await trialsByDog(lab, identity: false) == apart)
        #expect(try await trialsByDog(lab, identity: true) == apart)
        let before = try await dogTableHash(lab)
        #expect(before.hasPrefix("3 "))

        // The shared sample's uses are the lab's: 9 trials over two stations; the program is one.
        let samples = try await registry.samples()
        let t7 = try #require(samples.first { $0.id == shared.id.uuidString.lowercased() })
        #expect(t7.uses == 9 && t7.stationsUsed == 2 && t7.maxUses == 20)
        #expect(samples.filter { $0.label == "C-1" }.map(\.uses).sorted() == [4, 5])
        #expect(
            try await value("SELECT stations || ' ' || name FROM public.lab_programs", as: lab.researcher) == "2 study")

        // The merge, by id prefixes: counted as one dog from now on.
        let merge = try await registry.mergeDogs(
            keep: String(rexA.prefix(8)), merged: rexB, why: "the same dog: one microchip, 2 stations")
        #expect(try await trialsByDog(lab, identity: false) == apart)
        #expect(
            try await trialsByDog(lab, identity: true) == [bella + ":1", rexA + ":8"].sorted().joined(separator: ","))
        let merged = try #require(try await registry.dogs().first { $0.id == rexB })
        #expect(merged.mergedInto == rexA && merged.mergeId == merge && merged.countsAs == rexA)
        #expect(
            try await value("SELECT recorded_by || ' ' || why FROM public.dog_merges", as: lab.researcher)
                == "registrar_k the same dog: one microchip, 2 stations")

        // Refused, each in words naming what is wrong, with nothing written.
        let refusals: [(String, String, String)] = [
            (rexA, rexA, "cannot be merged into itself"),
            (rexB, rexA, "would make a cycle"),
            (bella, rexB, "is merged into dog \(rexA) already"),
        ]
        for (keep, mergedDog, words) in refusals {
            await #expect {
                _ = try await registry.mergeDogs(keep: keep, merged: mergedDog, why: "trying")
            } throws: { error in
                "\(error)".contains(words)
            }
        }
        await #expect(throws: RegistryError.unknownDog("0000dead")) {
            _ = try await registry.mergeDogs(keep: "0000dead", merged: rexB, why: "no such dog")
        }
        await #expect(throws: RegistryError.unknownDog("Rex")) {
            _ = try await registry.mergeDogs(keep: "Rex", merged: rexB, why: "names are not ids")
        }
        // A chain: Bella into the Rex merged into the other counts as that other.
        let chained = try await registry.mergeDogs(keep: rexB, merged: bella, why: "chained, for the test")
        #expect(try await trialsByDog(lab, identity: true) == "\(rexA):9")

        // Undone: two again, and the chain's undoing leaves Bella counting as Rex B only.
        _ = try await registry.undoMerge(String(merge.prefix(8)), why: "two dogs after all: the chips differ")
        #expect(
            try await trialsByDog(lab, identity: true) == [rexA + ":3", rexB + ":6"].sorted().joined(separator: ","))
        await #expect {
            _ = try await registry.undoMerge(merge, why: "again")
        } throws: { error in
            "\(error)".contains("was undone already")
        }
        _ = try await registry.undoMerge(chained, why: "the test's chain undone")
        #expect(try await trialsByDog(lab, identity: true) == apart)
        #expect(try await registry.dogs().allSatisfy { $0.countsAs == $0.id && $0.mergedInto == nil })
        // A merge undone may be recorded again: a new row, the old one still there.
        _ = try await registry.mergeDogs(keep: rexA, merged: rexB, why: "one dog after all")
        #expect(
            try await value("SELECT count(*) || ' ' || count(undo_id) FROM public.dog_merges", as: lab.researcher)
                == "3 2")
        await store.close()

        // Nobody rewrote a dog.
        #expect(try await dogTableHash(lab) == before)
    }

    @Test func onlyARegistrarRecordsAMergeAndNobodyRewritesOne() async throws {
        guard let server = try await TestServer.startOrSkip("registry: roles") else { return }
        let lab = try await server.makeLab()
        let shared = SampleRecord(label: "T-7", kind: .target)
        let a = try station(dogs: [("Rex", 1), ("Max", 1)], shared: shared)
        defer { try? FileManager.default.removeItem(atPath: a.directory) }
        try await sync(a, into: lab)
        let (rex, max) = (a.dogIds["Rex"]!, a.dogIds["Max"]!)
        let insert =
            "INSERT INTO store.dog_merge (id, kept_dog_id, merged_dog_id, recorded_by, why, wall_ns) VALUES ('m1', '\(rex)', '\(max)', 'me', 'why', 0)"

        for login in [lab.station, lab.researcher] {
            let store = try await LabStore.connect(login)
            for statement in [insert, "INSERT INTO store.dog_merge_undone VALUES ('u1', 'm1', 'me', 'why', 0)"] {
                await #expect {
                    try await store.execute(PostgresQuery(unsafeSQL: statement))
                } throws: { error in
                    "\(error)".contains("permission denied")
                }
            }
            await store.close()
        }

        let registrar = try await makeLogin("registrar_k", role: LabSchema.registrarRole, lab)
        let store = try await LabStore.connect(registrar)
        try await store.execute(PostgresQuery(unsafeSQL: insert))
        // Who and when are the server's, whatever the insert said.
        #expect(
            try await value("SELECT recorded_by || ' ' || (wall_ns > 0) FROM public.dog_merges", as: lab.researcher)
                == "registrar_k true")
        // A registrar reads the registry's views, not the station's tables, and rewrites nothing.
        for statement in [
            "UPDATE store.dog_merge SET why = 'other'", "DELETE FROM store.dog_merge", "SELECT * FROM store.dog",
            "INSERT INTO store.dog (id, station_id, name, mono_ns, wall_ns) VALUES ('d9', 'x', 'Rex', 1, 2)",
        ] {
            await #expect {
                try await store.execute(PostgresQuery(unsafeSQL: statement))
            } throws: { error in
                "\(error)".contains("permission denied")
            }
        }
        #expect(try await LabRegistry(store: store).dogs().count == 2)
        await store.close()
        // Not even the owner: the triggers refuse.
        let owner = try await LabStore.connect(lab.owner)
        for statement in [
            "UPDATE store.dog_merge SET why = 'other'", "DELETE FROM store.dog_merge",
            "TRUNCATE store.dog_merge CASCADE",
        ] {
            await #expect {
                try await owner.execute(PostgresQuery(unsafeSQL: statement))
            } throws: { error in
                "\(error)".contains("append-only")
            }
        }
        await owner.close()
    }

    @Test func aStationPullsTheLabsDogsAndSamplesWithTheirIdsAndTheirSessionsSyncBack() async throws {
        guard let server = try await TestServer.startOrSkip("registry: a station pulls") else { return }
        let lineupd = try #require(builtProduct("lineupd"), "lineupd is not built: run `swift build` first")
        let lab = try await server.makeLab()
        let shared = SampleRecord(label: "T-7", kind: .target, maxUses: 20)
        let a = try station(dogs: [("Rex", 2), ("Bella", 1)], shared: shared)
        defer { try? FileManager.default.removeItem(atPath: a.directory) }
        try await sync(a, into: lab)

        // Station B: a real lineupd serving its socket, with a Rex of its own.
        let directory = NSTemporaryDirectory() + "lab-pull-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (socket, db) = ("\(directory)/control.sock", "\(directory)/lineup.db")
        let daemon = Process()
        daemon.executableURL = URL(fileURLWithPath: lineupd)
        daemon.arguments = ["--simulate", "--serve", "--socket", socket, "--db", db, "--speed", "30", "--no-realtime"]
        daemon.standardOutput = FileHandle.nullDevice
        daemon.standardError = FileHandle.nullDevice
        try daemon.run()
        defer {
            daemon.terminate()
            daemon.waitUntilExit()
        }
        let client = ControlClient(path: socket, timeout: 5)
        // Bounded wait for the process to start serving (not a timing assumption of the test).
        let until = Date().addingTimeInterval(20)
        while (try? client.status()) == nil && Date() < until { usleep(20_000) }
        let rexB = try client.addDog(DogEntry(name: "Rex"))
        let file = try lab.stationFile(in: directory)

        let first = try runSync(["--pull-registry", "--log", db, "--connection", file, "--socket", socket, "--json"])
        #expect(first.status == 0, "\(first.stdout)\(first.stderr)")
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        let report = try decoder.decode(PulledForTest.self, from: Data(first.stdout.utf8))
        #expect(report.dogsAdded == [a.dogIds["Bella"]!])
        #expect(report.samplesAdded.count == 2 && report.samplesAdded.contains(shared.id.uuidString.lowercased()))
        // A's Rex is not B's Rex: left out, saying why.
        #expect(report.refused.map(\.id) == [a.dogIds["Rex"]!])
        #expect(report.refused.first?.reason.contains("named Rex") == true)

        // Pulled again: nothing added, nothing twice.
        let again = try runSync(["--pull-registry", "--log", db, "--connection", file, "--socket", socket])
        #expect(again.status == 0, "\(again.stdout)\(again.stderr)")
        #expect(again.stdout.contains("0 dogs and 0 samples added, 3 already here, 1 not pulled"), "\(again.stdout)")
        let reader = try SessionLog.openReader(path: db, everything: true)
        let bDogs = try reader.dogs()
        #expect(Set(bDogs.map(\.id)) == [rexB, a.dogIds["Bella"]!])
        #expect(try reader.samples().filter { $0.label == "T-7" }.map(\.id) == [shared.id.uuidString.lowercased()])

        // A session for the pulled dog on B syncs back under the dog's lab id, and the lab
        // still has one Bella, made on A.
        let session = try client.startSession(
            SessionRequest(dog: "Bella", program: "research-5-station", step: "phase-3/1", trials: 1, unlabelled: true))
        try client.endSession(suggestions: nil)
        let store = try await LabStore.connect(lab.station)
        _ = try await StationSync(reader: reader, store: store).run()
        await store.close()
        let bella = a.dogIds["Bella"]!
        #expect(
            try await value(
                """
                SELECT s.dog_id || ' ' || (s.station_id <> d.station_id) FROM store.session s
                JOIN store.dog d ON d.id = s.dog_id WHERE s.id = '\(session)'
                """, as: lab.owner) == "\(bella) true")
        #expect(
            try await value("SELECT string_agg(name, ',' ORDER BY name) FROM store.dog", as: lab.owner)
                == "Bella,Rex,Rex")
    }

    @Test func lineupctlLabCommandsAsARegistrarRunsThem() async throws {
        guard let server = try await TestServer.startOrSkip("registry: lineupctl lab") else { return }
        let lineupctl = try #require(builtProduct("lineupctl"), "lineupctl is not built: run `swift build` first")
        let lab = try await server.makeLab()
        let shared = SampleRecord(label: "T-7", kind: .target, maxUses: 20)
        let a = try station(dogs: [("Rex", 2)], shared: shared)
        let b = try station(dogs: [("Rex", 1)], shared: shared)
        defer {
            try? FileManager.default.removeItem(atPath: a.directory)
            try? FileManager.default.removeItem(atPath: b.directory)
        }
        try await sync(a, into: lab)
        try await sync(b, into: lab)
        let login = try await makeLogin("registrar_k", role: LabSchema.registrarRole, lab)
        let file = "\(a.directory)/registrar.conf"
        let text =
            "host = \(login.host)\nport = \(login.port)\ndatabase = lab\nuser = registrar_k\npassword = pw-registrar_k\n"
        FileManager.default.createFile(atPath: file, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600])
        func command(_ arguments: [String]) throws -> SyncRun {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: lineupctl)
            process.arguments = ["lab"] + arguments + ["--lab", file]
            let (out, err) = (Pipe(), Pipe())
            process.standardOutput = out
            process.standardError = err
            try process.run()
            let errData = err.fileHandleForReading.readDataToEndOfFile()
            let outData = out.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return SyncRun(
                status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
                stderr: String(decoding: errData, as: UTF8.self))
        }
        let (rexA, rexB) = (a.dogIds["Rex"]!, b.dogIds["Rex"]!)
        let dogs = try command(["dogs"])
        #expect(dogs.status == 0 && dogs.stdout.contains(rexA) && dogs.stdout.contains(rexB), "\(dogs)")
        let merged = try command(["dog-merge", String(rexA.prefix(8)), String(rexB.prefix(8)), "--why", "one chip"])
        #expect(merged.status == 0 && merged.stdout.hasPrefix("merge "), "\(merged)")
        let mergeId = try #require(merged.stdout.split(separator: " ").dropFirst().first.map(String.init))
        let json = try command(["dogs", "--json"])
        #expect(json.stdout.contains("\"merged_into\" : \"\(rexA)\""), "\(json.stdout)")
        let itself = try command(["dog-merge", rexA, rexA, "--why", "x"])
        #expect(itself.status == 1 && itself.stdout.isEmpty, "\(itself)")
        #expect(itself.stderr.contains("cannot be merged into itself"), "\(itself.stderr)")
        #expect(itself.stderr.split(separator: "\n").count == 1, "\(itself.stderr)")
        #expect(try command(["dog-unmerge", mergeId, "--why", "two dogs"]).status == 0)
        let twice = try command(["dog-unmerge", mergeId, "--why", "again"])
        #expect(twice.status == 1 && twice.stderr.contains("was undone already"), "\(twice)")
        let samples = try command(["samples"])
        #expect(samples.status == 0, "\(samples)")
        #expect(
            samples.stdout.split(separator: "\n").contains { $0.hasPrefix("T-7 ") && $0.contains(" 3 ") },
            "\(samples.stdout)")
        chmod(file, 0o644)
        let open = try command(["dogs"])
        #expect(open.status == 2 && open.stderr.contains("chmod 600"), "\(open)")
    }
}

/// lineup-sync --pull-registry --json, as a script reads it.
struct PulledForTest: Decodable {
    var dogsAdded: [String]
    var samplesAdded: [String]
    var present: Int
    var refused: [RegistryRefusal]
    var error: String?
}
