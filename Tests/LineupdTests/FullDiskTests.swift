import Foundation
import Glibc
import Testing

/// The station's log on a real, tiny filesystem (a 450 KiB tmpfs the test mounts, so it
/// needs root, as CI has): the block runs and clicks to the end, and what the log could not
/// keep is counted exactly, in the summary and on stderr, with a non-zero exit.
@Suite struct FullDiskStationTests {
    @Test(.enabled(if: getuid() == 0, "mounting a small tmpfs needs root (CI runs as root)"))
    func aFullDiskIsCountedExactly() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("full-disk-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let mount = Process()
        mount.executableURL = URL(fileURLWithPath: "/bin/mount")
        mount.arguments = ["-t", "tmpfs", "-o", "size=450k", "tmpfs", dir]
        try mount.run()
        mount.waitUntilExit()
        try #require(mount.terminationStatus == 0, "cannot mount a tmpfs on \(dir)")
        defer {
            let umount = Process()
            umount.executableURL = URL(fileURLWithPath: "/bin/umount")
            umount.arguments = [dir]
            try? umount.run()
            umount.waitUntilExit()
            try? FileManager.default.removeItem(atPath: dir)
        }
        let trials = 12
        let run = try lineupd(
            [
                "--simulate", "--trials", "\(trials)", "--speed", "10", "--seed", "1", "--device", "null",
                "--no-realtime",
                "--db", "\(dir)/x.db",
            ])
        // Every trial ran and was scored: the station kept clicking.
        #expect(run.stdout.contains("summary: \(trials) trial(s) scored"), "\(run.stdout)")
        #expect(run.status == 1)
        #expect(run.stderr.contains("is not on disk yet"), "\(run.stderr)")
        let lostLine = try #require(
            run.stderr.split(separator: "\n").first { $0.contains("the session log lost") }, "\(run.stderr)")
        let numbers = lostLine.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
        let lostEvents = numbers[0]
        let lostTrials = numbers[1]
        #expect(lostTrials > 0)
        // What the log holds plus what was counted lost is the whole block.
        let stored = try lineupctl(["trials", "--db", "\(dir)/x.db", "--json", "--limit", "0"])
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(stored.stdout.utf8)) as? [[String: Any]])
        #expect(rows.count + lostTrials == trials, "\(rows.count) logged + \(lostTrials) lost")
        let written = try #require(
            run.stdout.split(separator: "\n").first { $0.contains("events written") }?.split(separator: ",")
                .first { $0.contains("events written") }?.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
                .first)
        #expect(lostEvents > 0 && written > 0)
    }
}
