import Foundation
import WebAccounts

// The page's guards that need no HTTP to test: login sessions, the login rate limit, the
// Origin check. Time is handed in (seconds on any monotonic scale), so tests run in virtual time.

/// Someone logged in: who, in which role, and the token their state-changing requests carry.
public struct WebLogin: Sendable, Hashable {
    public var name: String
    public var role: WebRole
    /// Sent back in `X-CSRF-Token` by the page's script; a cross-site form cannot read it.
    public var csrf: String
    public var lastSeen: Double
    /// The account's password hash at login: a new password (or a removed account) ends the session.
    public var credential: String = ""
}

/// Random tokens from the system's generator (getrandom on Linux), 32 bytes as hex.
func randomToken() -> String {
    var generator = SystemRandomNumberGenerator()
    return (0..<4).map { _ in String(format: "%016llx", generator.next() as UInt64) }.joined()
}

/// The logged-in sessions, in memory: restarting lineup-web logs everyone out (the page then
/// shows its login). A session unused for `idleLimit` seconds ends.
public actor WebSessions {
    public let idleLimit: Double
    private var byToken: [String: WebLogin] = [:]

    public init(idleLimit: Double = 12 * 3600) { self.idleLimit = idleLimit }

    public func open(name: String, role: WebRole, credential: String = "", now: Double) -> (
        token: String, login: WebLogin
    ) {
        let login = WebLogin(name: name, role: role, csrf: randomToken(), lastSeen: now, credential: credential)
        let token = randomToken()
        byToken[token] = login
        return (token, login)
    }

    public func find(_ token: String, now: Double) -> WebLogin? {
        guard var login = byToken[token] else { return nil }
        guard now - login.lastSeen <= idleLimit else {
            byToken[token] = nil
            return nil
        }
        login.lastSeen = now
        byToken[token] = login
        return login
    }

    public func close(_ token: String) { byToken[token] = nil }
}

/// The login rate limit, the project's rule: each client address and each user name has a
/// bucket of 5 attempts that refills one attempt every 12 s (so 5 a minute, sustained); every
/// attempt, right or wrong, takes one from both, and an attempt finding either empty is
/// refused without checking the password. 100 wrong passwords for one name take at least
/// 95 × 12 s = 19 minutes, from any number of addresses.
public struct LoginLimiter: Sendable {
    public static let burst = 5.0
    public static let refillSeconds = 12.0

    private struct Bucket {
        var tokens: Double
        var at: Double
    }
    private var buckets: [String: Bucket] = [:]

    public init() {}

    /// Takes an attempt for both keys, or says how many seconds until one is free.
    public mutating func take(address: String, user: String, now: Double) -> Double? {
        let keys = ["address " + address, "user " + user.lowercased()]
        var waits: [Double] = []
        for key in keys {
            let bucket = refilled(key, now: now)
            if bucket.tokens < 1 { waits.append((1 - bucket.tokens) * Self.refillSeconds) }
        }
        if let wait = waits.max() { return wait }
        for key in keys {
            var bucket = refilled(key, now: now)
            bucket.tokens -= 1
            buckets[key] = bucket
        }
        // Forget full buckets now and then, so a scan of names cannot grow the table for ever.
        if buckets.count > 10_000 { buckets = buckets.filter { refilled($0.key, now: now).tokens < Self.burst } }
        return nil
    }

    private func refilled(_ key: String, now: Double) -> Bucket {
        guard let bucket = buckets[key] else { return Bucket(tokens: Self.burst, at: now) }
        let tokens = min(Self.burst, bucket.tokens + max(0, now - bucket.at) / Self.refillSeconds)
        return Bucket(tokens: tokens, at: now)
    }
}

/// A state-changing request must come from the page itself: its `Origin` names the host it
/// was sent to (over http or https, for a TLS proxy in front). A missing Origin is refused:
/// every browser this page supports sends it on POST.
public func originMatches(origin: String?, host: String?) -> Bool {
    guard let origin, let host, !host.isEmpty else { return false }
    return origin == "http://" + host || origin == "https://" + host
}

/// Compares a token sent with the session's in time that does not depend on where they differ.
func sameToken(_ sent: String?, _ expected: String) -> Bool {
    guard let sent else { return false }
    let a = Array(sent.utf8)
    let b = Array(expected.utf8)
    guard a.count == b.count else { return false }
    var difference: UInt8 = 0
    for i in a.indices { difference |= a[i] ^ b[i] }
    return difference == 0
}
