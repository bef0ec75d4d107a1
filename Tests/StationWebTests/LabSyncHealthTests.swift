import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import StationControl
import StationWeb
import Testing
import WebAccounts

/// The Health screen's "Lab sync" paragraph: /api/status and /api/health carry what lineup-sync
/// last reported to a real simulated lineupd, and the screen's own words for it (labSyncText,
/// run with node) are `lineupctl status`'s.
@Suite(.serialized) struct LabSyncHealthTests {
    @Test func theHealthScreenSaysHowFarTheLabSyncIsBehind() async throws {
        guard let station = try SimulatedStation() else { return }
        defer { station.terminate() }
        #expect(await station.waitReady())
        let link = SocketLink(path: station.socket)
        let state = WebState(users: try makeUsers(), link: link)
        try await Application(router: WebApp.router(state: state)).test(.router) { client in
            let page = try #require(try await client.login("researcher1").1)
            func labSync(_ uri: String) async throws -> LabSyncStatus? {
                let r = try await client.execute(uri: uri, method: .get, headers: page.getHeaders)
                #expect(r.status == .ok, "\(text(r.body))")
                if uri == "/api/status" {
                    return try JSONDecoder().decode(StationStatus.self, from: Data(buffer: r.body)).labSync
                }
                struct Health: Decodable { var status: StationStatus }
                return try JSONDecoder().decode(Health.self, from: Data(buffer: r.body)).status.labSync
            }
            #expect(try await labSync("/api/status") == LabSyncStatus(reporting: false))

            let ten: Int64 = 1_795_514_400 * 1_000_000_000  // 2026-11-24T10:00:00Z
            _ = try station.client.send(
                SyncReportEntry(
                    complete: false, behindRows: 120, oldestUnsyncedWallNs: ten - 1_800 * 1_000_000_000, sentRows: 30,
                    error: "the lab store cannot be reached", endedWallNs: ten))
            let reported = try #require(try await labSync("/api/health"))
            #expect(reported.reporting && reported.behindRows == 120, "\(reported)")
            #expect(reported.oldestUnsynced == "2026-11-24T09:30:00Z")

            let script = try await client.execute(uri: "/static/screens.js", method: .get, headers: page.getHeaders)
            let js = text(script.body)
            #expect(js.contains("sync.id = 'lab-sync'"))
            guard FileManager.default.isExecutableFile(atPath: "/usr/bin/node") else {
                print("LabSyncHealthTests: node is not installed; labSyncText's words not checked")
                return
            }
            let start = try #require(js.range(of: "function labSyncText(x) {"))
            let end = try #require(
                js.range(of: "\nasync function health()", range: start.upperBound..<js.endIndex))
            let function = String(js[start.lowerBound..<end.lowerBound])
            let encoded = String(decoding: try JSONEncoder().encode(reported), as: UTF8.self)
            let source =
                function + "\nconsole.log(labSyncText(\(encoded)));\nconsole.log(labSyncText({reporting: false}));"
            // node run and waited for on a thread of its own, not on Swift's pool (`onThread`).
            let words = try await onThread { try Self.runNode(source) }
            #expect(
                words == """
                    120 rows behind, the oldest from 2026-11-24T09:30:00Z; reported \(reported.reportedAt!); \
                    last success none since lineupd started; last error: the lab store cannot be reached
                    not reporting (no lineup-sync has reported since lineupd started)

                    """)
        }
    }

    static func runNode(_ source: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/node")
        process.arguments = ["-e", source]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }
}
