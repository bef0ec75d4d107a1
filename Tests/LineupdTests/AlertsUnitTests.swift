import Foundation
import Testing

/// systemd/lineup-alerts.service as systemd reads it: it verifies, it is exposed no more than
/// lineup-sync (the other unit with network beside lineupd), its configuration comes in as a
/// credential, and its user is made by sysusers.d in the station's group.
@Suite(.ownThreads) struct AlertsUnitTests {
    let sync = LineupSyncUnitTests()

    @Test func theUnitVerifiesAndIsExposedNoMoreThanTheSync() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-analyze") else {
            Issue.record("systemd-analyze is missing: install Debian's systemd package (.ci/run does)")
            return
        }
        let binary = sync.root.appendingPathComponent(".build/debug/lineup-alerts").path
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            Issue.record("lineup-alerts is not built: run `swift build` before `swift test`")
            return
        }
        let dir = try sync.unitsForThisBuild()
        defer { try? FileManager.default.removeItem(at: dir) }
        let unit = dir.appendingPathComponent("lineup-alerts.service")
        try sync.text("systemd/lineup-alerts.service").replacingOccurrences(
            of: "/usr/local/bin/lineup-alerts", with: binary
        ).write(to: unit, atomically: true, encoding: .utf8)
        let verify = try sync.run("/usr/bin/systemd-analyze", ["verify", unit.path])
        // verify also complains of what this machine lacks (the users, the credential's file):
        // only lines about the unit's own text count.
        let own = (verify.output + verify.errors).split(separator: "\n").filter {
            $0.contains("lineup-alerts.service:") && !$0.contains("Failed to resolve")
        }
        #expect(own.isEmpty, "\(verify.output)\(verify.errors)")
        let alerts = try sync.exposure(unit)
        let syncExposure = try sync.exposure(dir.appendingPathComponent("lineup-sync.service"))
        #expect(alerts <= syncExposure, "lineup-alerts \(alerts), lineup-sync \(syncExposure)")
    }

    @Test func itsConfigurationIsACredentialAndItsUserIsInTheStationsGroup() throws {
        let unit = try sync.text("systemd/lineup-alerts.service")
        #expect(sync.values("LoadCredential", in: unit) == ["alerts.toml:/etc/lineup/alerts.toml"])
        #expect(sync.values("ExecStart", in: unit) == ["/usr/local/bin/lineup-alerts --config %d/alerts.toml"])
        #expect(sync.values("User", in: unit) == ["lineup-alerts"])
        #expect(sync.values("SupplementaryGroups", in: unit) == ["lineup"])
        #expect(sync.values("RestartPreventExitStatus", in: unit) == ["2"])
        let users = try sync.text("systemd/sysusers.d/lineup-alerts.conf")
        #expect(users.contains("\nm lineup-alerts lineup\n"))
    }
}
