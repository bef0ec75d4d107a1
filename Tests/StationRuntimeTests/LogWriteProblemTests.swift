import Foundation
import Glibc
import StationRuntime
import Testing

/// Issue 36: the log's writability asked of the system directly, the one rule `status`, a
/// session's start, a resume and a simulated block go through (LogWriteProbeTests drives it
/// through the real lineupd).
@Suite struct LogWriteProblemTests {
    @Test func theProbeSaysWhyOrNothing() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("probe-\(UUID().uuidString)")
            .path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(logWriteProblem(forFileAt: directory + "/lineup.db") == nil)
        #expect(
            logWriteProblem(forFileAt: directory + "/nowhere/lineup.db")
                == "\(directory)/nowhere cannot be written by lineupd (No such file or directory)")
        // A file system mounted read-only (a card the kernel remounted after I/O errors): root
        // mounts one, as CI runs; access(2) alone would let root write anywhere else.
        guard getuid() == 0 else { return }
        let readOnly = directory + "/ro"
        try FileManager.default.createDirectory(atPath: readOnly, withIntermediateDirectories: true)
        let mount = Process()
        mount.executableURL = URL(fileURLWithPath: "/bin/mount")
        mount.arguments = ["-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", readOnly]
        try mount.run()
        mount.waitUntilExit()
        try #require(mount.terminationStatus == 0, "cannot mount a read-only tmpfs on \(readOnly)")
        defer {
            let umount = Process()
            umount.executableURL = URL(fileURLWithPath: "/bin/umount")
            umount.arguments = [readOnly]
            try? umount.run()
            umount.waitUntilExit()
        }
        #expect(
            logWriteProblem(forFileAt: readOnly + "/lineup.db") == "the log's disk (\(readOnly)) is mounted read-only")
    }
}
