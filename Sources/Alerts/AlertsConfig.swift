import Foundation

/// lineup-alerts' configuration (docs/alerts.md), as read from its TOML file.
public struct AlertsConfig: Sendable, Hashable {
    /// The station's name in every message; nil: the host's name.
    public var name: String?
    /// How often lineupd (and the lab store) is asked, in seconds.
    public var checkEvery: Double = 10
    /// Nil: an alert is never repeated.
    public var repeatEvery: Double? = 3600
    public var station: Station?
    public var lab: Lab?
    public var email: Email?
    public var webhooks: [Webhook] = []
    public var deadMan: DeadMan?

    public struct Station: Sendable, Hashable {
        public var socket: String = "/run/lineup/control.sock"
        public var times = StationRuleTimes()
    }

    public struct Lab: Sendable, Hashable {
        /// The store's connection file (docs/lab.md's `key = value` file).
        public var connection: String
        public var notSeenAfter: Double = 900
    }

    public enum Security: String, Sendable, Hashable, CaseIterable {
        /// Submission (587): plain TCP, then STARTTLS before anything else; refused if the server
        /// does not offer it.
        case starttls
        /// TLS from the first byte (465).
        case tls
        /// No TLS: only to a server on this machine (loopback).
        case none
    }

    public struct Email: Sendable, Hashable {
        public var server: String
        public var port: Int
        public var security: Security
        public var from: String
        public var to: [String]
        public var user: String?
        public var password: String?
        /// A CA's certificate (PEM) to check the server's by, instead of the system's.
        public var caFile: String?
    }

    public struct Webhook: Sendable, Hashable {
        public var url: String
        public var format: WebhookFormat
        /// Sent as `Authorization: Bearer TOKEN` (ntfy's access tokens, Matrix's access token).
        public var token: String?
    }

    public struct DeadMan: Sendable, Hashable {
        /// Pinged with GET on success; `URL/fail` with POST of what is wrong on trouble.
        public var url: String
        public var every: Double = 300
        public var failOnAlerts = true
    }

    public init() {}
}
