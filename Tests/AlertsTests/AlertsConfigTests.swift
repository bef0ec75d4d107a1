import Alerts
import Foundation
import StationConfig
import Testing

/// The alerts file: every value read, every bad one refused in one line naming the file and key.
@Suite struct AlertsConfigTests {
    static let good = """
        name = "Station A"
        check_every = "5s"
        repeat_every = "2h"

        [station]
        socket = "/run/lineup/control.sock"
        lineupd_down_after = "90s"
        session_stalled_after = "15m"
        sync_behind_after = "off"

        [lab]
        connection = "/etc/lineup/lab-alerts.conf"
        not_seen_after = "20m"

        [email]
        server = "smtp.lab.example"
        from = "lineup@lab.example"
        to = ["trainer@lab.example", "vet@lab.example"]
        user = "lineup"
        password = "secret"

        [[webhook]]
        url = "https://ntfy.sh/lab-lineup"
        format = "ntfy"

        [[webhook]]
        url = "https://matrix.lab.example/_matrix/client/v3/rooms/!r:lab.example/send/m.room.message"
        format = "matrix"
        token = "syt_token"

        [deadman]
        url = "https://hc-ping.com/5b1c"
        every = "1h"

        """

    @Test func aGoodFileIsReadWhole() throws {
        let c = try AlertsConfig.parse(text: Self.good, source: "alerts.toml")
        #expect(c.name == "Station A")
        #expect(c.checkEvery == 5)
        #expect(c.repeatEvery == 7200)
        #expect(
            c.station?.times == StationRuleTimes(lineupdDownAfter: 90, sessionStalledAfter: 900, syncBehindAfter: nil))
        #expect(c.lab?.notSeenAfter == 1200)
        #expect(c.email?.port == 587 && c.email?.security == .starttls)
        #expect(c.email?.to == ["trainer@lab.example", "vet@lab.example"])
        #expect(c.webhooks.map(\.format) == [.ntfy, .matrix])
        #expect(c.deadMan?.every == 3600 && c.deadMan?.failOnAlerts == true)
    }

    @Test func theDefaultsAreTheDocumentedOnes() throws {
        let c = try AlertsConfig.parse(
            text: "[station]\n[deadman]\nurl = \"https://hc-ping.com/x\"\n", source: "a.toml")
        #expect(c.checkEvery == 10 && c.repeatEvery == 3600)
        #expect(c.station?.socket == "/run/lineup/control.sock")
        #expect(
            c.station?.times == StationRuleTimes(lineupdDownAfter: 60, sessionStalledAfter: 600, syncBehindAfter: 21600)
        )
        #expect(c.deadMan?.every == 300)
    }

    @Test(arguments: [
        ("[station]\n", "a.toml: no channel: add [email], a [[webhook]] or [deadman], or nobody is told anything"),
        (
            "[deadman]\nurl = \"https://x.example/p\"\n",
            "a.toml: nothing to watch: add [station] (on a station) or [lab] (on the lab's server)"
        ),
        (
            "[station]\nsocket = 3\n[deadman]\nurl = \"https://x.example/p\"\n",
            "a.toml: station.socket: expected a string, found an integer"
        ),
        (
            "[station]\nlineupd_down = \"1m\"\n[deadman]\nurl = \"https://x.example/p\"\n",
            "a.toml: station.lineupd_down: unknown key; expected one of: socket, lineupd_down_after, session_stalled_after, sync_behind_after"
        ),
        (
            "[station]\nsession_stalled_after = \"10 minutes\"\n[deadman]\nurl = \"https://x.example/p\"\n",
            "a.toml: station.session_stalled_after: \"10 minutes\" is not a duration such as \"30s\", \"10m\", \"6h\" or \"2d\", or \"off\""
        ),
        (
            "check_every = \"0s\"\n[station]\n[deadman]\nurl = \"https://x.example/p\"\n",
            "a.toml: check_every: 0s is out of range; expected 1 s to 60 min"
        ),
        (
            "[station]\n[deadman]\nurl = \"ftp://x.example/p\"\n",
            "a.toml: deadman.url: \"ftp://x.example/p\" is not an http:// or https:// URL"
        ),
        (
            "[station]\n[[webhook]]\nurl = \"https://x.example/p\"\nformat = \"teams\"\n",
            "a.toml: webhook[0].format: \"teams\" is not one of json, ntfy, slack, matrix"
        ),
        (
            "[station]\n[[webhook]]\nurl = \"https://m.example/send\"\nformat = \"matrix\"\n",
            "a.toml: webhook[0].token: missing: a Matrix room needs the sending account's access token"
        ),
        (
            "[station]\n[[webhook]]\nurl = \"https://ntfy.sh/\"\nformat = \"ntfy\"\n",
            "a.toml: webhook[0].url: an ntfy URL names its topic: https://ntfy.sh/TOPIC"
        ),
        (
            "[station]\n[email]\nserver = \"smtp.example\"\nfrom = \"a@b.example\"\nto = \"c@d.example\"\nsecurity = \"none\"\n",
            "a.toml: email.security: none sends the password and the alerts in the clear: only for a server on this machine (localhost), and smtp.example is not"
        ),
        (
            "[station]\n[email]\nserver = \"smtp.example\"\nfrom = \"a@b.example\"\nto = [\"c@d.example\", \"nobody\"]\n",
            "a.toml: email.to: \"nobody\" is not an e-mail address (name@example.org)"
        ),
        (
            "[station]\n[email]\nserver = \"smtp.example\"\nfrom = \"a@b.example\"\nto = \"c@d.example\"\nuser = \"u\"\n",
            "a.toml: email.password: missing: user and password go together"
        ),
        (
            "[station]\n[email]\nserver = \"smtp.example\"\nfrom = \"a@b.example\"\nto = \"c@d.example\"\nport = 70000\n",
            "a.toml: email.port: 70000 is out of range; expected 1 to 65535"
        ),
        (
            "[station]\n[email]\nserver = \"smtp.example\"\nto = \"c@d.example\"\n",
            "a.toml: email.from: missing: the sender's address"
        ),
        (
            "[lab]\n[deadman]\nurl = \"https://x.example/p\"\n",
            "a.toml: lab.connection: missing: the lab store's connection file (docs/lab.md)"
        ),
        ("[station\n", "a.toml:1:9: TOML syntax error: Error while parsing table header: expected ']', saw '\\n'"),
        // Read by the board file's one TOML reader: a NUL byte is named, never handed to the parser.
        ("[station]\n\u{0}\n", "a.toml:2: TOML syntax error: the text contains a NUL byte"),
    ])
    func eachBadValueIsOneLineNamingItsKey(text: String, message: String) {
        #expect {
            _ = try AlertsConfig.parse(text: text, source: "a.toml")
        } throws: { error in
            let said = "\(error)"
            if said != message { Issue.record("said: \(said)") }
            return said == message
        }
    }

    /// docs/alerts.md shows the file whole: the very text must read.
    @Test func theDocumentedFileReads() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let doc = try String(contentsOf: root.appendingPathComponent("docs/alerts.md"), encoding: .utf8)
        let blocks = doc.components(separatedBy: "```toml\n").dropFirst().map { $0.components(separatedBy: "```")[0] }
        #expect(blocks.count >= 2)
        for block in blocks { #expect(throws: Never.self) { try AlertsConfig.parse(text: block, source: "docs") } }
    }
}
