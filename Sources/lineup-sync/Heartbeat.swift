import Foundation
import LabStore
import SessionLog

extension LineupSync {
    /// After each run, tells the lab how this station is (docs/lab.md, "The lab's page"). A
    /// heartbeat the store does not take is said on stderr and changes no exit status: the
    /// status is the sync's.
    func heartbeat(settings: LabConnection, reader: LogReader, report: SyncReport) async {
        do {
            try await StationHeartbeat.send(
                settings: settings, reader: reader, stationName: name ?? ProcessInfo.processInfo.hostName,
                socket: socket, syncIntervalSeconds: interval, report: report)
        } catch {
            FileHandle.standardError.write(Data("lineup-sync: heartbeat not sent: \(error)\n".utf8))
        }
    }
}
