import Dispatch
import Foundation
import GRDB
import PostgresNIO
import SessionLog
import StationControl
import TrainingEngine

/// How a station is, as the lab sees it: pushed into `store.station_heartbeat` by `lineup-sync`
/// after each run. lineupd's part comes over its control socket (as `lineupctl status` asks it);
/// when lineupd does not answer, the heartbeat says so and why: the station reaches the lab,
/// its daemon does not.
public struct StationHeartbeat: Sendable, Codable, Equatable {
    public var id: String
    /// The station log's identity (`log_identity`), as in every row the sync sends.
    public var stationID: String
    public var stationName: String
    public var wallNs: Int64
    public var monoNs: Int64
    /// The sync's interval: the lab's page judges silence against it.
    public var syncIntervalSeconds: Double
    public var lineupdReachable: Bool
    public var lineupdProblem: String?
    public var session: String?
    /// Left out while a double-blind session runs (`withholdsForBlind`).
    public var dog: String?
    public var mode: String?
    public var state: String?
    public var trial: Int?
    public var trials: Int?
    public var faults: [String]
    /// Free space on the disk of the station's log, measured by lineup-sync itself, so it is
    /// known when lineupd is down too.
    public var freeMegabytes: Int64?
    public var behindRows: Int?
    public var oldestUnsyncedWallNs: Int64?
    public var syncError: String?
    /// Whether a double-blind session's details were left out of this heartbeat.
    public var withholdsForBlind = false

    public init(
        id: String = UUID().uuidString.lowercased(), stationID: String, stationName: String, wallNs: Int64,
        monoNs: Int64, syncIntervalSeconds: Double, status: Result<StationStatus, ControlClientError>,
        freeMegabytes: Int64?, sync: SyncReport
    ) {
        self.id = id
        self.stationID = stationID
        self.stationName = stationName
        self.wallNs = wallNs
        self.monoNs = monoNs
        self.syncIntervalSeconds = syncIntervalSeconds
        self.freeMegabytes = freeMegabytes
        behindRows = sync.behindRows
        oldestUnsyncedWallNs = sync.oldestUnsyncedWallNs
        syncError = sync.error
        faults = []
        switch status {
        case .failure(let error):
            lineupdReachable = false
            lineupdProblem = error.description
        case .success(let status):
            lineupdReachable = true
            // What the heartbeat carries is the one rule's (`Visibility`, viewer `.heartbeat`):
            // the lab's page may be seen by a handler.
            let state = BlindState(mode: status.mode, running: status.session != nil)
            func shows(_ fact: SessionFact) -> Bool { Visibility.shows(fact, to: .heartbeat, in: state) }
            withholdsForBlind = state == .doubleBlindRunning
            session = shows(.session) ? status.session : nil
            dog = shows(.dog) ? status.dog : nil
            mode = status.mode?.rawValue
            // Holding says the dog's nose is at a station right now; withheld, the search runs.
            self.state =
                !shows(.holdingNow) && status.state == .holding
                ? StationState.searching.rawValue : status.state.rawValue
            trial = shows(.progress) ? status.trial : nil
            trials = shows(.progress) ? status.trials : nil
            faults = Self.faults(of: status, blind: !shows(.faultStation))
        }
    }

    /// The faults in one line each. Under the blind a sensor fault names no station: which
    /// sensor chatters or falls silent during a search can say where the dog was.
    static func faults(of status: StationStatus, blind: Bool) -> [String] {
        var faults: [String] = []
        let flagged = status.flaggedStations ?? []
        if blind {
            let byFault = Dictionary(grouping: flagged, by: \.fault.rawValue)
            for (fault, stations) in byFault.sorted(by: { $0.key < $1.key }) {
                faults.append("sensor \(fault) at \(stations.count) station\(stations.count == 1 ? "" : "s")")
            }
        } else {
            faults += flagged.map { "sensor \($0.fault.rawValue) at station \($0.station)" }
        }
        if let error = status.logError { faults.append("log: \(error)") }
        if let lost = status.logLost, lost > 0 { faults.append("log: \(lost) events lost") }
        if status.failedClicks > 0 { faults.append("click: \(status.failedClicks) failed") }
        if status.droppedEdges > 0 { faults.append("sensors: \(status.droppedEdges) edges dropped") }
        if let free = status.logFreeMegabytes, let minimum = status.logMinFreeMegabytes, free < minimum {
            faults.append("disk: \(free) MB free, below the \(minimum) MB sessions need")
        } else if let free = status.logFreeMegabytes, let warn = status.logWarnFreeMegabytes, free < warn {
            faults.append("disk: \(free) MB free, below the \(warn) MB warning")
        }
        return faults
    }

    /// Appends this heartbeat to the store (the station role may insert it, nothing more).
    public func insert(into store: LabStore) async throws {
        try await store.execute(
            """
            INSERT INTO store.station_heartbeat (id, station_id, station_name, wall_ns, mono_ns,
                sync_interval_seconds, lineupd_reachable, lineupd_problem, session_id, dog, mode, state,
                trial, trials, faults, free_megabytes, behind_rows, oldest_unsynced_wall_ns, sync_error)
            VALUES (\(id), \(stationID), \(stationName), \(wallNs), \(monoNs), \(syncIntervalSeconds),
                \(lineupdReachable), \(lineupdProblem), \(session), \(dog), \(mode), \(state), \(trial),
                \(trials), \(faults), \(freeMegabytes), \(behindRows.map(Int64.init)), \(oldestUnsyncedWallNs),
                \(syncError))
            """)
    }

    /// Asks lineupd for its status off Swift's cooperative threads (the client blocks up to
    /// `timeout` seconds).
    public static func askStatus(socket: String, timeout: Double = 5) async -> Result<
        StationStatus, ControlClientError
    > {
        let client = ControlClient(path: socket, timeout: timeout)
        return await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                do throws(ControlClientError) {
                    continuation.resume(returning: .success(try client.status()))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        }
    }

    /// Free megabytes on the filesystem holding `path`, for its owner's use (statvfs).
    public static func freeMegabytes(at path: String) -> Int64? {
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        var info = statvfs()
        guard statvfs(directory, &info) == 0 else { return nil }
        return Int64(info.f_bavail) * Int64(info.f_frsize) / 1_000_000
    }

    /// The station's identity from its log.
    public static func stationID(reader: LogReader) throws -> String {
        do {
            let id = try reader.read { db in
                try String.fetchOne(db, sql: "SELECT id FROM log_identity ORDER BY rowid LIMIT 1")
            }
            guard let id else {
                throw LabStoreError.stationLog(path: reader.path, problem: "it has no identity (log_identity is empty)")
            }
            return id
        } catch let error as LabStoreError {
            throw error
        } catch {
            throw LabStoreError.stationLog(path: reader.path, problem: "\(error)")
        }
    }

    /// One heartbeat after a sync run: lineupd's status (or why not), the disk, the run's
    /// report; sent over a fresh connection, since the run's may be the one that failed.
    @discardableResult
    public static func send(
        settings: LabConnection, reader: LogReader, stationName: String, socket: String?,
        syncIntervalSeconds: Double, report: SyncReport
    ) async throws -> StationHeartbeat {
        let stationID = try stationID(reader: reader)
        let status = await askStatus(socket: ControlClient.path(option: socket))
        let beat = StationHeartbeat(
            stationID: stationID, stationName: stationName,
            wallNs: Int64(Date().timeIntervalSince1970 * 1e9),
            monoNs: Int64(DispatchTime.now().uptimeNanoseconds), syncIntervalSeconds: syncIntervalSeconds,
            status: status, freeMegabytes: freeMegabytes(at: reader.path), sync: report)
        let store = try await LabStore.connect(settings)
        do {
            try await beat.insert(into: store)
        } catch {
            await store.close()
            throw error
        }
        await store.close()
        return beat
    }
}
