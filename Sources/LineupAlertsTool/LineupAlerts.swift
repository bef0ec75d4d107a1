import Alerts
import ArgumentParser
import Foundation
import LabStore
import StationConfig

/// lineup-alerts: tells people when the unattended station needs them (docs/alerts.md). lineupd
/// keeps no network; this process asks it over its control socket, and on the lab's server reads
/// the store's heartbeats, and sends e-mail, webhooks and a dead-man heartbeat.
struct LineupAlerts: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lineup-alerts",
        abstract: "Watch the station (or the lab's stations) and send alerts: e-mail, webhooks, a dead-man URL.",
        discussion: """
            The configuration (TOML, docs/alerts.md) holds the channels' passwords, tokens and secret URLs, \
            so it must be readable by its owner only (chmod 600), or be handed in as a systemd credential. \
            Exit status: 2 for a bad configuration (one line says what and where), 1 when --test could not \
            deliver on every channel, 0 otherwise.
            """)

    @Option(help: "The configuration file (mode 0600).")
    var config = "/etc/lineup/alerts.toml"

    @Flag(help: "Check the configuration and exit.")
    var check = false

    @Flag(help: "Send one test message through every channel (and ping the dead-man URL), then exit.")
    var test = false

    func run() async throws {
        let settings = Self.load(config)
        if check {
            print("lineup-alerts: \(config) is good: \(Self.summary(settings))")
            return
        }
        let name = settings.name ?? ProcessInfo.processInfo.hostName
        let channels = Channels(settings: settings, hostName: ProcessInfo.processInfo.hostName)
        if test {
            let now = Date()
            let notice = AlertNotice(
                kind: .alert, rule: .sensor, key: "test", station: name, title: "a test of lineup-alerts",
                message: "This is a test: lineup-alerts can reach you on this channel. Nothing is wrong.",
                at: now, since: now)
            var failed = await channels.send(notice)
            if let dead = settings.deadMan {
                do {
                    try await HTTPSender.ping(.success, url: dead.url, station: name)
                } catch {
                    failed.append("dead-man ping: \(error)")
                }
            }
            for failure in failed { say(failure) }
            if !failed.isEmpty { throw ExitCode(1) }
            print("lineup-alerts: the test went out on every channel")
            return
        }
        say("watching \(Self.summary(settings))")
        await Watcher(settings: settings, station: name, channels: channels).run()
    }

    /// The configuration, or one line and exit 2.
    static func load(_ path: String) -> AlertsConfig {
        var info = stat()
        guard stat(path, &info) == 0 else {
            fail("\(path): cannot read the file: \(String(cString: strerror(errno)))", code: 2)
        }
        let mode = info.st_mode & 0o777
        if LabConnection.othersMayOpen(path: path, mode: mode, reader: geteuid()) {
            fail(
                "\(path): readable by its group or others (mode \(String(mode, radix: 8))) and it holds the channels' "
                    + "passwords and secret URLs: chmod 600 \(path)", code: 2)
        }
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8)
        else { fail("\(path): cannot read the file as UTF-8 text", code: 2) }
        do {
            let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
            return try AlertsConfig.parse(text: text, source: path, baseDirectory: directory)
        } catch {
            fail(error.description, code: 2)
        }
    }

    static func summary(_ c: AlertsConfig) -> String {
        var watched: [String] = []
        if let s = c.station { watched.append("lineupd on \(s.socket)") }
        if c.lab != nil { watched.append("the lab store's heartbeats") }
        var told: [String] = []
        if let e = c.email { told.append("e-mail to \(e.to.joined(separator: ", ")) via \(e.server):\(e.port)") }
        for hook in c.webhooks {
            told.append("a \(hook.format.rawValue) webhook at \(URL(string: hook.url)?.host ?? "?")")
        }
        if let d = c.deadMan { told.append("a dead-man ping every \(AlertText.duration(d.every))") }
        return watched.joined(separator: " and ") + ", every \(AlertText.duration(c.checkEvery)); "
            + told.joined(separator: "; ")
    }
}

func say(_ text: String) {
    FileHandle.standardError.write(Data("lineup-alerts: \(text)\n".utf8))
}

func fail(_ text: String, code: Int32) -> Never {
    say(text)
    exit(code)
}

/// Every configured channel; each notice goes to all of them.
struct Channels: Sendable {
    var settings: AlertsConfig
    var hostName: String

    /// What could not be delivered, one line each.
    func send(_ notice: AlertNotice) async -> [String] {
        var failed: [String] = []
        for channel in all {
            do {
                try await send(notice, on: channel)
            } catch {
                failed.append("\(channel.name): \(error)")
            }
        }
        return failed
    }
}
