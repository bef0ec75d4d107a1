import Foundation
import Glibc
import StationControl
import Testing

/// Issue 36's "done when" for the alerts: a real SMTP server (aiosmtpd, STARTTLS required, a
/// login) and an HTTP receiver on loopback, a served simulated lineupd with faults injected,
/// and `lineup-alerts` as a process: each alert arrives exactly once within its time, its
/// "resolved" once, and the dead-man URL goes silent while lineupd is stopped.
@Suite(.serialized, .ownThreads) struct AlertsEndToEndTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static let hasAiosmtpd: Bool = {
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        probe.arguments = ["python3", "-c", "import aiosmtpd"]
        probe.standardOutput = FileHandle.nullDevice
        probe.standardError = FileHandle.nullDevice
        guard (try? probe.run()) != nil else { return false }
        probe.waitUntilExit()
        return probe.terminationStatus == 0
    }()

    /// The receivers: a CA and a `localhost` certificate made by openssl, aiosmtpd requiring
    /// STARTTLS and the login `lineup`/`s3cret`, http.server answering 200; every message and
    /// request appended to received.jsonl with its arrival time; the ports in ports.json.
    static let receivers = #"""
        import asyncio, json, os, ssl, subprocess, sys, threading, time
        from email import message_from_bytes
        from email.policy import default
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
        from aiosmtpd.smtp import SMTP, AuthResult

        d = sys.argv[1]
        plain = len(sys.argv) > 2 and sys.argv[2] == "plain"
        def run(*a): subprocess.run(a, check=True, capture_output=True)
        key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        run("openssl", "req", "-x509", *key, "-keyout", d + "/ca.key", "-out", d + "/ca.crt", "-days", "1", "-subj", "/CN=alerts test ca")
        run("openssl", "req", *key, "-keyout", d + "/server.key", "-out", d + "/server.csr", "-subj", "/CN=localhost")
        open(d + "/server.ext", "w").write("subjectAltName = DNS:localhost\n")
        run("openssl", "x509", "-req", "-in", d + "/server.csr", "-CA", d + "/ca.crt", "-CAkey", d + "/ca.key",
            "-CAcreateserial", "-out", d + "/server.crt", "-days", "1", "-extfile", d + "/server.ext")

        lock = threading.Lock()
        def record(obj):
            obj["time"] = time.time()
            with lock, open(d + "/received.jsonl", "a") as f:
                f.write(json.dumps(obj) + "\n")

        class Mail:
            async def handle_DATA(self, server, session, envelope):
                m = message_from_bytes(envelope.original_content, policy=default)
                record({"kind": "mail", "subject": str(m["subject"]), "to": envelope.rcpt_tos,
                        "body": m.get_content(), "tls": session.ssl is not None,
                        "authenticated": bool(session.authenticated)})
                return "250 OK"

        def login(server, session, envelope, mechanism, data):
            return AuthResult(success=data.login == b"lineup" and data.password == b"s3cret")

        tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        tls.load_cert_chain(d + "/server.crt", d + "/server.key")

        class Web(BaseHTTPRequestHandler):
            def answer(self):
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n).decode()
                if self.path == "/hook" and os.path.exists(d + "/refuse"):  # a webhook down for a while
                    record({"kind": "refused", "path": self.path})
                    self.send_response(503)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                record({"kind": "http", "method": self.command, "path": self.path, "body": body})
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"OK")
            do_GET = do_POST = do_PUT = answer
            def log_message(self, *a): pass

        web = ThreadingHTTPServer(("127.0.0.1", 0), Web)
        threading.Thread(target=web.serve_forever, daemon=True).start()

        async def main():
            loop = asyncio.get_running_loop()
            if plain:  # a server that offers no STARTTLS, and takes anything
                make = lambda: SMTP(Mail(), hostname="localhost")
            else:
                make = lambda: SMTP(Mail(), hostname="localhost", tls_context=tls, require_starttls=True,
                                    authenticator=login, auth_require_tls=True)
            smtp = await loop.create_server(make, "127.0.0.1", 0)
            with open(d + "/ports.tmp", "w") as f:
                json.dump({"smtp": smtp.sockets[0].getsockname()[1], "http": web.server_address[1]}, f)
            os.rename(d + "/ports.tmp", d + "/ports.json")
            await asyncio.Event().wait()

        asyncio.run(main())
        """#

    struct Received {
        var mails: [[String: Any]] = []
        var hooks: [[String: Any]] = []
        var pings: [Double] = []
        var refused = 0

        init(directory: String) {
            guard let text = try? String(contentsOfFile: directory + "/received.jsonl", encoding: .utf8) else { return }
            for line in text.split(separator: "\n") {
                guard let o = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
                    continue
                }
                if o["kind"] as? String == "mail" {
                    mails.append(o)
                } else if o["kind"] as? String == "refused" {
                    refused += 1
                } else if o["path"] as? String == "/hook" {
                    hooks.append(
                        try! JSONSerialization.jsonObject(with: Data((o["body"] as! String).utf8)) as! [String: Any])
                    hooks[hooks.count - 1]["received"] = o["time"]
                } else if (o["path"] as? String)?.hasPrefix("/ping") == true {
                    pings.append(o["time"] as! Double)
                }
            }
        }

        /// The webhook's notices as `state key`, in order.
        var notices: [String] { hooks.map { "\($0["state"]!) \($0["key"]!)" } }
        func arrival(_ notice: String) -> Double? {
            hooks.first { "\($0["state"]!) \($0["key"]!)" == notice }?["received"] as? Double
        }
    }

    func start(_ executable: String, _ arguments: [String], output: String) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        FileManager.default.createFile(atPath: output, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        return process
    }

    func board(directory: String, warn: Int) throws -> String {
        let vm = try String(contentsOf: Self.root.appendingPathComponent("hardware/vm/vm.toml"), encoding: .utf8)
        let path = directory + "/board.toml"
        try (vm + "\n[log]\nwarn_free_mb = \(warn)\nmin_free_mb = 1\n").write(
            toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// A reload (SIGHUP) is no restart: `status`'s uptime is lineupd's, and goes on across it.
    /// lineup-alerts tells a restart by the start time it implies; before, each reload made the
    /// station anew with its uptime at 0, and a reload was told as "lineupd restarted".
    @Test func aReloadKeepsLineupdsUptime() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("reload-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let boardPath = try board(directory: dir, warn: 300)
        guard let daemon = try ServingStationTests.Daemon(speed: 20, extra: ["--config", boardPath]) else { return }
        defer { if daemon.process.isRunning { _ = daemon.terminate() } }
        #expect(daemon.waitReady(dogs: []))
        #expect(eventually(30) { ((try? daemon.client.status().uptimeSeconds) ?? 0) >= 2 })
        let before = try daemon.client.status().uptimeSeconds
        _ = try board(directory: dir, warn: 400)
        kill(daemon.process.processIdentifier, SIGHUP)
        #expect(eventually(30) { (try? daemon.client.status().logWarnFreeMegabytes) == 400 }, "never reloaded")
        let after = try daemon.client.status().uptimeSeconds
        #expect(after >= before, "uptime \(before) s before the reload, \(after) s after")
        #expect(daemon.terminate().status == 0)
    }

    /// The receivers in a fresh directory, and their ports; `plain`: an SMTP server without TLS.
    func receivers(plain: Bool = false) throws -> (dir: String, process: Process, smtp: Int, http: Int)? {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("alerts-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try Self.receivers.write(toFile: dir + "/receivers.py", atomically: true, encoding: .utf8)
        let process = try start(
            "/usr/bin/env", ["python3", dir + "/receivers.py", dir] + (plain ? ["plain"] : []),
            output: dir + "/receivers.log")
        guard eventually(60, { FileManager.default.fileExists(atPath: dir + "/ports.json") }) else {
            Issue.record(
                "the receivers did not start: \((try? String(contentsOfFile: dir + "/receivers.log", encoding: .utf8)) ?? "")"
            )
            process.terminate()
            return nil
        }
        let ports =
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dir + "/ports.json")))
            as? [String: Int]
        return (dir, process, ports?["smtp"] ?? 0, ports?["http"] ?? 0)
    }

    /// `lineup-alerts ARGS` to its end: status and stderr.
    func alerts(_ arguments: [String], in dir: String) throws -> (status: Int32, errors: String) {
        let process = try start(
            Self.root.appendingPathComponent(".build/debug/lineup-alerts").path, arguments, output: dir + "/run.log")
        process.waitUntilExit()
        return (process.terminationStatus, (try? String(contentsOfFile: dir + "/run.log", encoding: .utf8)) ?? "")
    }

    /// Nothing in the clear: a server without STARTTLS, or one whose certificate the station
    /// cannot check, gets no message; `--test` names the channel that failed and exits 1, and
    /// the webhook still gets its test. A configuration others may read is refused, exit 2.
    @Test(.enabled(if: hasAiosmtpd, "aiosmtpd is absent: pip install --break-system-packages aiosmtpd"))
    func noMailGoesInTheClearOrToAServerItCannotCheck() throws {
        for plain in [true, false] {
            guard let r = try receivers(plain: plain) else { return }
            defer { r.process.terminate() }
            let config = """
                name = "Test station"
                [station]
                [email]
                server = "localhost"
                port = \(r.smtp)
                from = "lineup@lab.example"
                to = "trainer@lab.example"
                user = "lineup"
                password = "s3cret"
                [[webhook]]
                url = "http://127.0.0.1:\(r.http)/hook"
                """
            try config.write(toFile: r.dir + "/alerts.toml", atomically: true, encoding: .utf8)
            chmod(r.dir + "/alerts.toml", 0o644)
            let open = try alerts(["--config", r.dir + "/alerts.toml", "--check"], in: r.dir)
            #expect(open.status == 2)
            #expect(
                open.errors
                    == "lineup-alerts: \(r.dir)/alerts.toml: readable by its group or others (mode 644) and it holds "
                    + "the channels' passwords and secret URLs: chmod 600 \(r.dir)/alerts.toml\n")
            chmod(r.dir + "/alerts.toml", 0o600)
            let test = try alerts(["--config", r.dir + "/alerts.toml", "--test"], in: r.dir)
            #expect(test.status == 1, "\(test.errors)")
            let why =
                plain
                ? "the server offers no STARTTLS: nothing was sent in the clear"
                : "TLS: the server's certificate is not signed by a CA this machine trusts (or set ca_file), "
                    + "or is out of date: nothing was sent"
            let lines = test.errors.split(separator: "\n")
            #expect(
                lines.count == 1 && lines[0].hasPrefix("lineup-alerts: e-mail: e-mail through localhost:\(r.smtp): "),
                "\(test.errors)")
            #expect(test.errors.contains(why), "\(test.errors)")
            let received = Received(directory: r.dir)
            #expect(received.mails.isEmpty)
            #expect(received.notices == ["alert test"])
        }
    }

    @Test(.enabled(if: hasAiosmtpd, "aiosmtpd is absent: pip install --break-system-packages aiosmtpd"))
    func eachFaultIsToldOnceAndItsEndOnceAndTheDeadManFallsSilent() throws {
        let alerts = Self.root.appendingPathComponent(".build/debug/lineup-alerts").path
        guard FileManager.default.isExecutableFile(atPath: alerts) else {
            Issue.record("lineup-alerts is not built: run `swift build` before `swift test`")
            return
        }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("alerts-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try Self.receivers.write(toFile: dir + "/receivers.py", atomically: true, encoding: .utf8)
        let receivers = try start(
            "/usr/bin/env", ["python3", dir + "/receivers.py", dir], output: dir + "/receivers.log")
        defer { receivers.terminate() }
        #expect(eventually(60) { FileManager.default.fileExists(atPath: dir + "/ports.json") }, "no receivers")
        let ports = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dir + "/ports.json")))
                as? [String: Int])

        // The disk "full": the board warns below 10 TB. The vm board's lines and timing, at the
        // fastest speed its hold allows (a 60 s search takes 3 s).
        let boardPath = try board(directory: dir, warn: 10_000_000)
        guard
            let daemon = try ServingStationTests.Daemon(
                speed: 20,
                extra: [
                    "--config", boardPath, "--fault", "stuck:B@1-1", "--sensitivity", "0", "--false-alert-rate", "0",
                ])
        else { return }
        defer { if daemon.process.isRunning { _ = daemon.terminate() } }
        #expect(daemon.waitReady(dogs: ["Rex"]))

        let config = """
            name = "Test station"
            check_every = "1s"
            repeat_every = "1h"
            [station]
            socket = "\(daemon.socket)"
            lineupd_down_after = "2s"
            session_stalled_after = "8s"
            sync_behind_after = "off"
            [email]
            server = "localhost"
            port = \(ports["smtp"]!)
            from = "lineup@lab.example"
            to = "trainer@lab.example"
            user = "lineup"
            password = "s3cret"
            ca_file = "ca.crt"
            [[webhook]]
            url = "http://127.0.0.1:\(ports["http"]!)/hook"
            format = "json"
            [deadman]
            url = "http://127.0.0.1:\(ports["http"]!)/ping"
            every = "1s"
            """
        try config.write(toFile: dir + "/alerts.toml", atomically: true, encoding: .utf8)
        chmod(dir + "/alerts.toml", 0o600)
        // The webhook is down at first: what it refuses is sent again, to it alone.
        FileManager.default.createFile(atPath: dir + "/refuse", contents: nil)
        let sender = try start(alerts, ["--config", dir + "/alerts.toml"], output: dir + "/alerts.log")
        defer { if sender.isRunning { sender.terminate() } }
        func log() -> String {
            ((try? String(contentsOfFile: dir + "/alerts.log", encoding: .utf8)) ?? "")
                + ((try? String(contentsOfFile: dir + "/receivers.log", encoding: .utf8)) ?? "")
        }
        func arrives(_ notice: String, within seconds: Double) -> Bool {
            eventually(seconds) { Received(directory: dir).notices.contains(notice) }
        }
        let began = Date().timeIntervalSince1970

        // Low disk: told at the first checks; resolved once the board is reloaded with room.
        #expect(
            eventually(15) {
                Received(directory: dir).mails.contains { ($0["subject"] as? String)?.hasSuffix("nearly full") == true }
            },
            "\(log())")
        #expect(eventually(10) { Received(directory: dir).refused >= 2 }, "the webhook was not tried again")
        #expect(!Received(directory: dir).notices.contains("alert disk"))
        try FileManager.default.removeItem(atPath: dir + "/refuse")
        #expect(arrives("alert disk", within: 15), "\(log())")
        _ = try board(directory: dir, warn: 1)
        kill(daemon.process.processIdentifier, SIGHUP)
        #expect(arrives("resolved disk", within: 15), "\(log())")

        // A stuck sensor: B, through trial 1.
        let client = daemon.client
        let session = try client.startSession(
            SessionRequest(dog: "Rex", program: "research-5-station", step: "phase-3/1", trials: 3, unlabelled: true))
        try client.ready()
        #expect(arrives("alert sensor B", within: 15), "\(log())")
        // Trial 1 over, trial 2 waits for a ready nobody presses: stalled after 8 s (trial 1's
        // search is 3 s; the margin is for a loaded machine, where it may take longer).
        #expect(eventually(20) { (try? client.status().trialsDone) == 1 }, "trial 1 never ended")
        let waiting = Date().timeIntervalSince1970
        #expect(arrives("alert session stalled \(session)", within: 20), "\(log())")
        let stalledAt = try #require(Received(directory: dir).arrival("alert session stalled \(session)"))
        #expect(stalledAt - waiting >= 7, "stalled after \(stalledAt - waiting) s, before its 8 s")
        try client.ready()
        #expect(arrives("resolved session stalled \(session)", within: 15), "\(log())")
        try client.abort()
        try client.endSession(suggestions: nil)
        #expect(arrives("resolved sensor B", within: 15), "\(log())")

        // lineupd stopped: told after its 2 s, and the dead-man URL goes silent.
        #expect(daemon.terminate().status == 0)
        let stopped = Date().timeIntervalSince1970
        #expect(arrives("alert lineupd down", within: 20), "\(log())")
        let downAt = try #require(Received(directory: dir).arrival("alert lineupd down"))
        #expect(downAt - stopped >= 1.5, "down told after \(downAt - stopped) s, before its 2 s")
        usleep(8_000_000)
        let pings = Received(directory: dir).pings
        #expect(pings.filter { $0 < stopped }.count >= 3, "the dead-man was not pinged while lineupd ran")
        #expect(
            pings.filter { $0 > stopped + 5 }.isEmpty, "pinged after lineupd stopped: \(pings.map { $0 - stopped })")

        // lineupd back on the same log: resolved, and its restart told once.
        guard let again = try ServingStationTests.Daemon(speed: 20, directory: daemon.directory) else { return }
        defer { if again.process.isRunning { _ = again.terminate() } }
        #expect(again.waitReady(dogs: []))
        #expect(arrives("resolved lineupd down", within: 15), "\(log())")
        #expect(arrives("alert lineupd restarted", within: 15), "\(log())")
        #expect(eventually(15) { Received(directory: dir).pings.contains { $0 > Date().timeIntervalSince1970 - 2 } })
        usleep(3_000_000)
        sender.terminate()
        sender.waitUntilExit()

        // Exactly once each, on both channels.
        let received = Received(directory: dir)
        let expected = [
            "alert disk", "resolved disk", "alert sensor B", "alert session stalled \(session)",
            "resolved session stalled \(session)", "resolved sensor B", "alert lineupd down",
            "resolved lineupd down", "alert lineupd restarted",
        ]
        #expect(received.notices.sorted() == expected.sorted(), "\(received.notices)\n\(log())")
        let subjects = received.mails.map { $0["subject"] as! String }
        #expect(subjects.count == expected.count, "\(subjects)")
        #expect(
            subjects.filter { $0 == "[lineup] Test station: station B's sensor is stuck" }.count == 1, "\(subjects)")
        #expect(subjects.filter { $0 == "[lineup] Test station: resolved: lineupd is not answering" }.count == 1)
        #expect(received.mails.allSatisfy { $0["tls"] as? Bool == true && $0["authenticated"] as? Bool == true })
        #expect(received.mails.allSatisfy { ($0["to"] as? [String]) == ["trainer@lab.example"] })
        _ = began
    }
}
