import Foundation
import SessionLog
import StationControl
import Testing
import TrainingEngine

/// Where `dogs add`, `samples add` and the other additions go: to the lineupd answering on the
/// socket whenever one does ($LINEUP_DB only chooses what reads use), straight into a file
/// only when it is not that lineupd's log or no lineupd answers, and then said in one line.
/// The station here is a stand-in on the real control socket that says which log it writes
/// and records what it is asked, so a row written around it is seen in the file.
@Suite("the researcher's additions go to the running station", .serialized, .ownThreads)
struct RegistryWritesTests {
    /// Answers `about` with `log` and records each addition; refuses what it does not serve.
    final class Station: StationControlling, @unchecked Sendable {
        let log: String
        private let lock = NSLock()
        private var asked: [String] = []
        var additions: [String] { lock.withLock { asked } }

        init(log: String) { self.log = log }

        private func record(_ what: String) -> String {
            lock.withLock { asked.append(what) }
            return UUID().uuidString.lowercased()
        }

        func about() -> StationAbout { StationAbout(log: log, programsDirectory: nil, programs: []) }
        func version() -> StationVersion { StationVersion(protocolVersion: 1, libgpiod: "-", alsaLib: "-") }
        func addDog(_ entry: DogEntry) throws(ControlRefusal) -> String { record("dog \(entry.name)") }
        func addSample(_ entry: SampleEntry) throws(ControlRefusal) -> String { record("sample \(entry.label)") }
        func noteSample(_ entry: SampleNoteEntry) throws(ControlRefusal) -> String { record("note \(entry.sample)") }
        func noteDog(_ entry: DogNoteEntry) throws(ControlRefusal) -> String { record("dog note \(entry.dog)") }
        func correctTrial(_ entry: TrialCorrectionEntry) throws(ControlRefusal) -> String {
            record("correct \(entry.trial)")
        }
        func noteSession(_ entry: SessionNoteEntry) throws(ControlRefusal) -> String {
            record("session note \(entry.session)")
        }
        func status() -> StationStatus { StationStatus(state: .idle, audio: "none", gpio: "none") }
        func startSession(_ request: SessionRequest) throws(ControlRefusal) -> SessionStarted {
            throw ControlRefusal(.failed, "not served here")
        }
        func layout(view: ClientView) throws(ControlRefusal) -> [LayoutEntry] {
            throw ControlRefusal(.noSession, "no session is running")
        }
        func ready() throws(ControlRefusal) -> ReadyReply { throw ControlRefusal(.noSession, "no session is running") }
        func abort() throws(ControlRefusal) { throw ControlRefusal(.noSession, "no session is running") }
        func endSession(suggestions: String?) throws(ControlRefusal) {
            throw ControlRefusal(.noSession, "no session is running")
        }
        func watch(_ send: @escaping @Sendable (String) -> Bool) -> Int { 0 }
        func unwatch(_ token: Int) {}
        func simulate(_ input: SimulatedInput) throws(ControlRefusal) {
            throw ControlRefusal(.badRequest, "not served here")
        }
    }

    let directory: String
    /// The log the station says it writes, and another one.
    let stationLog: String
    let otherLog: String
    let socket: String
    let station: Station
    let server: ControlServer

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("adds-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        stationLog = directory + "/lineup.db"
        otherLog = directory + "/other.db"
        for path in [stationLog, otherLog] { _ = try SessionLog(path: path) }
        socket = directory + "/control.sock"
        station = Station(log: stationLog)
        server = ControlServer(controller: station, options: .init(path: socket, group: nil))
        try server.start()
    }

    func dogs(in path: String) throws -> [String] { try SessionLog.openReader(path: path).dogs().map(\.name) }

    @Test func withLineupDBNamingTheStationsLogTheStationWrites() throws {
        defer { server.stop() }
        let env = ["LINEUP_SOCKET": socket, "LINEUP_DB": stationLog]
        let dog = try lineupctl(["dogs", "add", "Bo"], environment: env)
        #expect(dog.status == 0 && dog.stderr.isEmpty, "\(dog.stderr)")
        let sample = try lineupctl(["samples", "add", "T-3", "--kind", "target"], environment: env)
        #expect(sample.status == 0 && sample.stderr.isEmpty, "\(sample.stderr)")
        // --db naming the same log, spelt otherwise, goes to the station too.
        let spelt = try lineupctl(["dogs", "add", "Cy", "--db", directory + "/./lineup.db"], environment: env)
        #expect(spelt.status == 0 && spelt.stderr.isEmpty, "\(spelt.stderr)")
        #expect(station.additions == ["dog Bo", "sample T-3", "dog Cy"])
        // Nothing went around it into the file.
        #expect(try dogs(in: stationLog).isEmpty)
        #expect(try SessionLog.openReader(path: stationLog).samples().isEmpty)
    }

    @Test func lineupDBNamingAnotherLogStillLeavesWritesToTheStationAndSaysSo() throws {
        defer { server.stop() }
        let added = try lineupctl(
            ["dogs", "add", "Bo"], environment: ["LINEUP_SOCKET": socket, "LINEUP_DB": otherLog])
        #expect(added.status == 0)
        #expect(station.additions == ["dog Bo"])
        #expect(try dogs(in: otherLog).isEmpty)
        #expect(
            added.stderr
                == "lineupctl: added to \(stationLog), the log lineupd writes; $LINEUP_DB (\(otherLog)), which reads use, is another\n"
        )
    }

    @Test func dashDashDbNamingAnotherFileWritesThatFileAndSaysSo() throws {
        defer { server.stop() }
        let added = try lineupctl(["dogs", "add", "Bo", "--db", otherLog], environment: ["LINEUP_SOCKET": socket])
        #expect(added.status == 0)
        #expect(station.additions.isEmpty)
        #expect(try dogs(in: otherLog) == ["Bo"])
        #expect(
            added.stderr
                == "lineupctl: written to \(otherLog) directly: lineupd on \(socket) writes another log, \(stationLog)\n"
        )
    }

    @Test func withNoStationAnsweringTheNamedLogIsWrittenAndThatIsSaid() throws {
        server.stop()
        let gone = directory + "/gone.sock"
        let added = try lineupctl(["dogs", "add", "Bo"], environment: ["LINEUP_SOCKET": gone, "LINEUP_DB": otherLog])
        #expect(added.status == 0)
        #expect(try dogs(in: otherLog) == ["Bo"])
        #expect(
            added.stderr
                == "lineupctl: written to \(otherLog) directly: no lineupd answers on \(gone) (a station with no daemon)\n"
        )
        // A refusal is the one line, with nothing said of where it went.
        let twice = try lineupctl(["dogs", "add", "Bo"], environment: ["LINEUP_SOCKET": gone, "LINEUP_DB": otherLog])
        #expect(twice.status == 1)
        #expect(twice.stderr.split(separator: "\n").count == 1 && twice.stderr.contains("already in the log"))
    }
}
