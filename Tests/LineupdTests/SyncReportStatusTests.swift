import Foundation
import StationControl
import Testing

/// `sync-report` over a real served lineupd: before any, `status` says the lab sync is not
/// reporting; a failed run's report shows its rows behind and its error; a complete one shows
/// up to date with its time as the last success, which a later failure keeps.
@Suite(.serialized, .ownThreads) struct SyncReportStatusTests {
    @Test func statusShowsTheLatestSyncReport() throws {
        guard let daemon = try ServingStationTests.Daemon(speed: 30) else { return }
        defer { if daemon.process.isRunning { _ = daemon.terminate() } }
        #expect(daemon.waitReady(dogs: []))
        let env = ["LINEUP_SOCKET": daemon.socket]
        func statusLine() throws -> String {
            let run = try lineupctl(["status"], environment: env)
            #expect(run.status == 0, "\(run.stderr)")
            return String(run.stdout.split(separator: "\n").first { $0.hasPrefix("Lab sync    ") } ?? "")
        }
        func statusJSON() throws -> [String: Any] {
            let run = try lineupctl(["status", "--json"], environment: env)
            #expect(run.status == 0, "\(run.stderr)")
            let object = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any]
            return try #require(object?["lab_sync"] as? [String: Any], "\(run.stdout)")
        }

        #expect(
            try statusLine() == "Lab sync    not reporting (no lineup-sync has reported since lineupd started)")
        #expect(try statusJSON()["reporting"] as? Bool == false)

        // 2026-11-24T10:00:00Z and 09:30:00Z, in ns.
        let ten: Int64 = 1_795_514_400 * 1_000_000_000
        let halfPastNine = ten - 1_800 * 1_000_000_000
        let failed = SyncReportEntry(
            complete: false, behindRows: 120, oldestUnsyncedWallNs: halfPastNine, sentRows: 30,
            error: "the connection to the lab store was lost", endedWallNs: ten)
        _ = try daemon.client.send(failed)
        var line = try statusLine()
        #expect(
            line.hasPrefix("Lab sync    120 rows behind, the oldest from 2026-11-24T09:30:00Z; reported "), "\(line)")
        #expect(
            line.hasSuffix(
                "; last success none since lineupd started; last error: the connection to the lab store was lost"),
            "\(line)")

        let done = SyncReportEntry(
            complete: true, behindRows: 0, oldestUnsyncedWallNs: nil, sentRows: 120, error: nil,
            endedWallNs: ten + 60 * 1_000_000_000)
        _ = try daemon.client.send(done)
        line = try statusLine()
        #expect(line.hasPrefix("Lab sync    up to date (0 rows behind); reported "), "\(line)")
        #expect(line.hasSuffix("; last success 2026-11-24T10:01:00Z"), "\(line)")

        // The store unreachable: behind unknown, the last success kept.
        let unreachable = SyncReportEntry(
            complete: false, behindRows: nil, oldestUnsyncedWallNs: nil, sentRows: 0,
            error: "the lab store cannot be reached", endedWallNs: ten + 120 * 1_000_000_000)
        _ = try daemon.client.send(unreachable)
        line = try statusLine()
        #expect(line.hasPrefix("Lab sync    behind: unknown (the store did not answer); reported "), "\(line)")
        #expect(line.hasSuffix("; last success 2026-11-24T10:01:00Z; last error: the lab store cannot be reached"))
        let json = try statusJSON()
        #expect(json["reporting"] as? Bool == true)
        #expect(json["behind_rows"] == nil && json["last_success"] as? String == "2026-11-24T10:01:00Z")
        #expect(json["last_error"] as? String == "the lab store cannot be reached")
        #expect(json["reported_at"] is String)

        // A report that makes no sense is refused, naming the field; the last one stands.
        #expect(throws: ControlClientError.self) {
            _ = try daemon.client.send(
                SyncReportEntry(
                    complete: true, behindRows: -1, oldestUnsyncedWallNs: nil, sentRows: 0, error: nil, endedWallNs: ten
                ))
        }
        #expect(try statusJSON()["last_error"] as? String == "the lab store cannot be reached")
        #expect(daemon.terminate().status == 0)
    }
}
