import Foundation
import StationConfig
import TOMLKit

// Reads lineup-alerts' file key by key, so each refusal is one line naming the file, the key
// and what is wrong, in the board file's style (StationConfigError: `file: key: message`, or
// `file:line:column: message` for the TOML itself).

extension AlertsConfig {
    /// Parses the file's text; `source` names it in messages; a relative path in it is taken
    /// from `baseDirectory`. Reads no file (the tests hand in text).
    public static func parse(text: String, source: String, baseDirectory: String = ".") throws(StationConfigError)
        -> AlertsConfig
    {
        let root = try StationConfigLoader.tomlTable(text: text, source: source, kind: "an alerts file")
        return try read(Keys(table: root, path: "", source: source, base: baseDirectory))
    }

    static func read(_ root: Keys) throws(StationConfigError) -> AlertsConfig {
        try root.only(["name", "check_every", "repeat_every", "station", "lab", "email", "webhook", "deadman"])
        var config = AlertsConfig()
        config.name = try root.text("name")
        config.checkEvery = try root.duration("check_every", min: 1, max: 3600) ?? config.checkEvery
        if root.has("repeat_every") { config.repeatEvery = try root.duration("repeat_every", min: 60, off: true) }
        if let station = try root.table("station") {
            try station.only(["socket", "lineupd_down_after", "session_stalled_after", "sync_behind_after"])
            var s = Station()
            s.socket = try station.path("socket") ?? s.socket
            for (key, path) in [
                ("lineupd_down_after", \StationRuleTimes.lineupdDownAfter),
                ("session_stalled_after", \.sessionStalledAfter), ("sync_behind_after", \.syncBehindAfter),
            ] where station.has(key) {
                s.times[keyPath: path] = try station.duration(key, min: 0, off: true)
            }
            config.station = s
        }
        if let lab = try root.table("lab") {
            try lab.only(["connection", "not_seen_after"])
            guard let connection = try lab.path("connection") else {
                throw lab.error(.missingKey, "connection", "missing: the lab store's connection file (docs/lab.md)")
            }
            config.lab = Lab(connection: connection, notSeenAfter: try lab.duration("not_seen_after", min: 10) ?? 900)
        }
        guard config.station != nil || config.lab != nil else {
            throw root.error(
                .missingKey, nil, "nothing to watch: add [station] (on a station) or [lab] (on the lab's server)")
        }
        if let email = try root.table("email") { config.email = try Self.email(email) }
        config.webhooks = try root.tables("webhook").map { hook throws(StationConfigError) in try Self.webhook(hook) }
        if let dead = try root.table("deadman") {
            try dead.only(["url", "every", "fail_on_alerts"])
            guard let url = try dead.url("url") else {
                throw dead.error(.missingKey, "url", "missing: the dead-man service's ping URL")
            }
            var d = DeadMan(url: url)
            d.every = try dead.duration("every", min: 1, max: 86400) ?? d.every
            d.failOnAlerts = try dead.bool("fail_on_alerts") ?? d.failOnAlerts
            config.deadMan = d
        }
        guard config.email != nil || !config.webhooks.isEmpty || config.deadMan != nil else {
            throw root.error(
                .missingKey, nil, "no channel: add [email], a [[webhook]] or [deadman], or nobody is told anything")
        }
        return config
    }

    static func email(_ t: Keys) throws(StationConfigError) -> Email {
        try t.only(["server", "port", "security", "from", "to", "user", "password", "ca_file"])
        guard let server = try t.text("server") else {
            throw t.error(.missingKey, "server", "missing: the lab's SMTP server (a host name)")
        }
        var security = Security.starttls
        if let word = try t.text("security") {
            guard let chosen = Security(rawValue: word) else {
                throw t.error(.invalidValue, "security", "\"\(word)\" is not one of starttls, tls, none")
            }
            security = chosen
        }
        if security == .none, !["localhost", "127.0.0.1", "::1"].contains(server) {
            throw t.error(
                .invalidValue, "security",
                "none sends the password and the alerts in the clear: only for a server on this machine "
                    + "(localhost), and \(server) is not")
        }
        let port = try t.int("port", in: 1...65535) ?? (security == .tls ? 465 : security == .none ? 25 : 587)
        guard let from = try t.text("from") else { throw t.error(.missingKey, "from", "missing: the sender's address") }
        try t.address(from, key: "from")
        // One address, or a list of them.
        var to: [String] = []
        if t.table["to"]?.string != nil {
            to = try t.text("to").map { [$0] } ?? []
        } else {
            to = try t.strings("to")
        }
        guard !to.isEmpty else {
            throw t.error(.missingKey, "to", "missing: who gets the alerts (an address or a list)")
        }
        for address in to { try t.address(address, key: "to") }
        let user = try t.text("user")
        let password = try t.string("password")
        if (user == nil) != (password == nil) {
            throw t.error(.missingKey, user == nil ? "user" : "password", "missing: user and password go together")
        }
        return Email(
            server: server, port: port, security: security, from: from, to: to, user: user, password: password,
            caFile: try t.path("ca_file"))
    }

    static func webhook(_ t: Keys) throws(StationConfigError) -> Webhook {
        try t.only(["url", "format", "token"])
        guard let url = try t.url("url") else { throw t.error(.missingKey, "url", "missing: where to POST") }
        var format = WebhookFormat.json
        if let word = try t.text("format") {
            guard let chosen = WebhookFormat(rawValue: word) else {
                let all = WebhookFormat.allCases.map(\.rawValue).joined(separator: ", ")
                throw t.error(.invalidValue, "format", "\"\(word)\" is not one of \(all)")
            }
            format = chosen
        }
        if format == .ntfy, URL(string: url)?.path.split(separator: "/").isEmpty != false {
            throw t.error(.invalidValue, "url", "an ntfy URL names its topic: https://ntfy.sh/TOPIC")
        }
        let token = try t.text("token")
        if format == .matrix, token == nil {
            throw t.error(.missingKey, "token", "missing: a Matrix room needs the sending account's access token")
        }
        return Webhook(url: url, format: format, token: token)
    }
}
