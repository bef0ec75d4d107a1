import Foundation
import Glibc
import LabStore
import Testing

/// lineup-alerts on the lab's server, against a real PostgreSQL: a station whose newest
/// heartbeat is older than `not_seen_after` (by the store's clock) is told once, as a JSON
/// webhook to a receiver on loopback, and resolved once when its next heartbeat arrives.
@Suite(.serialized, .ownThreads) struct LabAlertsTests {
    /// http.server answering 200 to everything, each request's body a line of received.jsonl.
    static let receiver = #"""
        import json, os, sys, time
        from http.server import BaseHTTPRequestHandler, HTTPServer
        d = sys.argv[1]
        class Web(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
                with open(d + "/received.jsonl", "a") as f:
                    f.write(json.dumps({"time": time.time(), "body": json.loads(body)}) + "\n")
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()
            def log_message(self, *a): pass
        web = HTTPServer(("127.0.0.1", 0), Web)
        open(d + "/port.tmp", "w").write(str(web.server_address[1]))
        os.rename(d + "/port.tmp", d + "/port")
        web.serve_forever()
        """#

    /// The webhook's notices as `state key`, with their arrival times.
    static func received(_ directory: String) -> [(notice: String, time: Double)] {
        let text = (try? String(contentsOfFile: directory + "/received.jsonl", encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            guard let o = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let body = o["body"] as? [String: Any], let time = o["time"] as? Double
            else { return nil }
            return ("\(body["state"] ?? "?") \(body["key"] ?? "?")", time)
        }
    }

    @Test func aStationNotHeardFromIsToldOnceAndResolvedWhenItIs() async throws {
        guard let server = try await TestServer.startOrSkip("aStationNotHeardFromIsToldOnceAndResolvedWhenItIs")
        else { return }
        guard let alerts = builtProduct("lineup-alerts") else {
            Issue.record("lineup-alerts is not built: run `swift build` before `swift test`")
            return
        }
        let lab = try await server.makeLab()
        let (directory, log) = try emptyStationLog()
        let sync = [
            "--once", "--log", log, "--connection", try lab.stationFile(in: directory), "--socket",
            directory + "/no-lineupd.sock", "--name", "bench-c", "--interval", "60",
        ]
        #expect(try runSync(sync).status == 0)
        let station = try await value("SELECT station_id FROM station_heartbeats", as: lab.researcher)
        let seen = try #require(
            Double(
                try await value(
                    "SELECT extract(epoch FROM received_at)::text FROM station_heartbeats", as: lab.researcher)))

        try Self.receiver.write(toFile: directory + "/receiver.py", atomically: true, encoding: .utf8)
        let receiver = try Child(["/usr/bin/env", "python3", directory + "/receiver.py", directory])
        defer { receiver.kill(SIGTERM) }
        try await waitUntil(.seconds(30), for: "the receiver's port") {
            FileManager.default.fileExists(atPath: directory + "/port")
        }
        let port = try String(contentsOfFile: directory + "/port", encoding: .utf8)
        let r = lab.researcher
        FileManager.default.createFile(
            atPath: directory + "/lab-alerts.conf",
            contents: Data(
                "host = \(r.host)\nport = \(r.port)\ndatabase = \(r.database)\nuser = \(r.user)\npassword = \(r.password!)\n"
                    .utf8), attributes: [.posixPermissions: 0o600])
        FileManager.default.createFile(
            atPath: directory + "/alerts.toml",
            contents: Data(
                """
                name = "lab server"
                check_every = "1s"
                [lab]
                connection = "lab-alerts.conf"
                not_seen_after = "10s"
                [[webhook]]
                url = "http://127.0.0.1:\(port)/hook"

                """.utf8), attributes: [.posixPermissions: 0o600])
        let watcher = try Child([alerts, "--config", directory + "/alerts.toml"])
        defer { watcher.kill(SIGTERM) }

        let key = "not seen \(station)"
        try await waitUntil(.seconds(60), for: "the alert (\(watcher.stderr()))") {
            Self.received(directory).contains { $0.notice == "alert \(key)" }
        }
        let told = try #require(Self.received(directory).first { $0.notice == "alert \(key)" })
        // Not before its 10 s (the receiver's clock and the store's are this machine's).
        #expect(told.time - seen >= 9.5, "told \(told.time - seen) s after the heartbeat")
        #expect(try runSync(sync).status == 0)
        try await waitUntil(.seconds(60), for: "the resolved (\(watcher.stderr()))") {
            Self.received(directory).contains { $0.notice == "resolved \(key)" }
        }
        try await Task.sleep(for: .seconds(2))
        #expect(Self.received(directory).map(\.notice) == ["alert \(key)", "resolved \(key)"])
    }
}
