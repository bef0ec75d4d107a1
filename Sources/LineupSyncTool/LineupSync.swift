import ArgumentParser
import Foundation
import LabStore
import SessionLog
import StationControl

/// lineup-sync: the station's own small process that pushes its log into the lab's PostgreSQL
/// store. lineupd keeps no network; this reads the log read-only beside it.
struct LineupSync: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lineup-sync",
        abstract: "Send this station's log to the lab store (PostgreSQL): what the store lacks, in order, once.",
        discussion: """
            The store's address and password come from the connection file (key = value lines: host, port, \
            database, user, password), which must be readable by its owner only (chmod 600); never from \
            the command line. Exit status: 0 when everything the log held at the start is in the store \
            and the store's own counts prove it (a running double-blind session is held back until it \
            ends), 1 when the store could not take it all (unreachable, lost, a login, grant or row \
            refused, the proof failed), 2 for bad input.
            """,
        // Hidden: the lab store's client lineupctl starts for --lab and `lab` (LabLinkServer.swift).
        subcommands: [LabLinkCommand.self])

    @Option(name: .customLong("log"), help: "The station's session log, opened read-only.")
    var log = "/var/lib/lineup/lineup.db"

    @Option(name: .customLong("connection"), help: "The connection file (mode 0600).")
    var connection = "/etc/lineup/lab-store.conf"

    @Flag(help: "Sync once and exit (the exit status says whether all was sent); without it, sync every --interval.")
    var once = false

    @Option(help: "Seconds between syncs when looping.")
    var interval: Double = 60

    @Option(help: "Rows per batch; each batch is one transaction.")
    var batch = 500

    @Option(
        help: ArgumentHelp(
            "lineupd's control socket, told after each run how far the store is behind, asked for its status for the lab's heartbeat, and given --pull-registry's dogs and samples (default: $\(ControlProtocol.socketEnvironmentVariable), else \(ControlProtocol.defaultSocketPath)).",
            valueName: "path"))
    var socket: String?

    @Flag(help: "Print each run's report as one JSON line.")
    var json = false

    @Flag(help: "Create or migrate the store's schema and roles, then exit (run as the store's owner).")
    var migrate = false

    @Flag(
        name: .customLong("pull-registry"),
        help: """
            Bring the lab's dogs and samples this station's log lacks from the store to lineupd, over its \
            control socket, with their lab ids, and each sample's uses on the lab's other stations for its \
            usage limits; then exit.
            """)
    var pullRegistry = false

    @Option(help: "This station's name on the lab's page (default: the host name).")
    var name: String?

    func validate() throws {
        guard !(migrate && pullRegistry) else {
            throw ValidationError("--migrate and --pull-registry are two runs: give one of them")
        }
        guard interval >= 1, interval <= 86_400 else {
            throw ValidationError("--interval \(interval) is outside 1...86400 seconds")
        }
        guard (1...10_000).contains(batch) else {
            throw ValidationError("--batch \(batch) is outside 1...10000 rows")
        }
    }

    func run() async throws {
        let settings: LabConnection
        do {
            settings = try LabConnection.read(path: connection)
        } catch {
            fail("\(error)", code: 2)
        }
        if migrate {
            do {
                let store = try await LabStore.connect(settings)
                defer { Task { await store.close() } }
                let applied = try await store.migrate()
                say(
                    applied.isEmpty
                        ? "the store \(settings.display) is up to date" : "applied \(applied.joined(separator: ", "))")
                return
            } catch {
                fail("\(error)", code: 1)
            }
        }
        let reader: LogReader
        do {
            reader = try SessionLog.openReader(path: log, everything: true)
        } catch {
            fail("\(error)", code: 2)
        }
        if pullRegistry {
            let pull = RegistryPull(settings: settings, reader: reader, socket: ControlClient.path(option: socket))
            let report = await pull.run()
            if json {
                let encoder = JSONEncoder()
                encoder.keyEncodingStrategy = .convertToSnakeCase
                encoder.outputFormatting = [.sortedKeys]
                say(String(decoding: try encoder.encode(report), as: UTF8.self))
            } else {
                for line in report.lines { say(line) }
            }
            if report.error != nil { throw ExitCode(1) }
            return
        }
        // A test hook only (docs/tests.md): hold inside that batch until a line arrives on stdin.
        let hold = ProcessInfo.processInfo.environment["LINEUP_SYNC_HOLD_IN_BATCH"].flatMap(Int.init)
        while true {
            let report = await syncOnce(settings: settings, reader: reader, hold: hold)
            if !report.loginRefused { await heartbeat(settings: settings, reader: reader, report: report) }
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys]
                say(String(decoding: try encoder.encode(report), as: UTF8.self))
            } else {
                say(Self.line(report))
            }
            tellStation(report)
            if once {
                if !report.complete { throw ExitCode(1) }
                return
            }
            try await Task.sleep(nanoseconds: UInt64(interval * 1e9))
        }
    }

    func syncOnce(settings: LabConnection, reader: LogReader, hold: Int?) async -> SyncReport {
        let store: LabStore
        do {
            store = try await LabStore.connect(settings)
        } catch {
            var report = SyncReport()
            report.error = "\(error)"
            return report
        }
        let sync = StationSync(reader: reader, store: store, batchSize: batch, holdInBatch: hold)
        do {
            let report = try await sync.run()
            await store.close()
            return report
        } catch {
            await store.close()
            // What the store now has, from a fresh connection when it answers again.
            var report = SyncReport()
            if let again = try? await LabStore.connect(settings) {
                report = (try? await StationSync(reader: reader, store: again).behindOnly()) ?? report
                await again.close()
            }
            report.error = "\(error)"
            if case .loginRefused = error as? LabStoreError { report.loginRefused = true }
            return report
        }
    }

    /// Tells the running lineupd how far the store is behind, for its status and page. A station
    /// whose lineupd is not running still syncs: that is said, and the exit status is the sync's.
    func tellStation(_ report: SyncReport) {
        let path = ControlClient.path(option: socket)
        let entry = SyncReportEntry(
            complete: report.complete, behindRows: report.behindRows,
            oldestUnsyncedWallNs: report.oldestUnsyncedWallNs, sentRows: report.sentTotal, error: report.error,
            endedWallNs: Int64(Date().timeIntervalSince1970 * 1e9))
        do {
            _ = try ControlClient(path: path, timeout: 5).send(entry)
        } catch {
            FileHandle.standardError.write(
                Data("lineup-sync: could not report to lineupd at \(path) (\(error)); the sync itself went on\n".utf8))
        }
    }

    static func line(_ report: SyncReport) -> String {
        var parts: [String] = []
        if let error = report.error {
            parts.append("lineup-sync: \(error)")
        }
        let sent = report.sent.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        parts.append("sent \(report.sentTotal) rows" + (sent.isEmpty ? "" : " (\(sent))"))
        if !report.heldBackSessions.isEmpty {
            let sessions = report.heldBackSessions.joined(separator: ", ")
            parts.append(
                "held back \(report.heldBackRows) rows until the running double-blind session "
                    + "\(sessions) ends on the station")
        }
        if let behind = report.behindRows, behind > 0 {
            let oldest = report.oldestUnsyncedWallNs.map {
                ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: Double($0) / 1e9))
            }
            parts.append("behind: \(behind) rows" + (oldest.map { ", oldest unsynced \($0)" } ?? ""))
        } else if report.behindRows == 0 {
            parts.append("behind: 0 rows")
        } else {
            parts.append("behind: unknown (the store did not answer)")
        }
        return parts.joined(separator: "; ")
    }

    func say(_ line: String) {
        StandardOutput.write(Data((line + "\n").utf8), program: "lineup-sync")
    }

    func fail(_ message: String, code: Int32) -> Never {
        FileHandle.standardError.write(Data("lineup-sync: \(message)\n".utf8))
        Foundation.exit(code)
    }
}
