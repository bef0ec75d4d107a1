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
                settings: settings, reader: reader, stationName: name ?? Self.hostName(),
                socket: socket, syncIntervalSeconds: interval, report: report)
        } catch {
            FileHandle.standardError.write(Data("lineup-sync: heartbeat not sent: \(error)\n".utf8))
        }
    }

    /// The machine's name as gethostname(2) has it: no name lookup, which a station without
    /// network could wait on.
    static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "unnamed station" }
        return String(cString: buffer)
    }
}
