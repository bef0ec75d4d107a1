import Foundation
import SessionLog
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

/// The logged-in sessions. Kept in the accounts file too (only each cookie's digest) when given
/// one, so restarting lineup-web logs nobody out: the page reconnects by itself. A session
/// unused for `idleLimit` seconds ends, across restarts too (its last use is kept by the wall
/// clock, written at most every `persistEvery` seconds of use).
public actor WebSessions {
    public let idleLimit: Double
    public static let persistEvery: Double = 300
    /// By the token's digest: what the file keeps.
    private var byKey: [String: WebLogin] = [:]
    private var persistedAt: [String: Double] = [:]
    private let store: UserStore?
    private let wallClock: @Sendable () -> Double
    private var loaded = false
    private var storeFailed = false

    public init(
        idleLimit: Double = 12 * 3600, store: UserStore? = nil,
        wallClock: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }
    ) {
        self.idleLimit = idleLimit
        self.store = store
        self.wallClock = wallClock
    }

    static func key(_ token: String) -> String {
        SHA256Digest.digest(Array(token.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    public func open(name: String, role: WebRole, credential: String = "", now: Double) -> (
        token: String, login: WebLogin
    ) {
        loadIfNeeded(now: now)
        let login = WebLogin(name: name, role: role, csrf: randomToken(), lastSeen: now, credential: credential)
        let token = randomToken()
        let key = Self.key(token)
        byKey[key] = login
        persist(key, login)
        return (token, login)
    }

    public func find(_ token: String, now: Double) -> WebLogin? {
        loadIfNeeded(now: now)
        let key = Self.key(token)
        guard var login = byKey[key] else { return nil }
        guard now - login.lastSeen <= idleLimit else {
            remove(key)
            return nil
        }
        login.lastSeen = now
        byKey[key] = login
        if wallClock() - (persistedAt[key] ?? 0) >= Self.persistEvery { persist(key, login) }
        return login
    }

    /// Whether the session is still open, without counting this as its use (a live stream
    /// asks every second; an open page alone does not keep a session alive forever).
    public func holds(_ token: String) -> Bool { byKey[Self.key(token)] != nil }

    public func close(_ token: String) { remove(Self.key(token)) }

    private func remove(_ key: String) {
        byKey[key] = nil
        persistedAt[key] = nil
        guard let store else { return }
        do { try store.removeLogin(key: key) } catch { report(error) }
    }

    private func persist(_ key: String, _ login: WebLogin) {
        guard let store else { return }
        let wall = wallClock()
        do {
            try store.saveLogin(
                StoredLogin(
                    key: key, name: login.name, role: login.role, csrf: login.csrf, credential: login.credential,
                    lastSeen: wall))
            persistedAt[key] = wall
        } catch { report(error) }
    }

    /// The sessions kept by the last lineup-web, each with the idle time it had left.
    private func loadIfNeeded(now: Double) {
        guard !loaded, let store else { return }
        loaded = true
        let wall = wallClock()
        do {
            for kept in try store.logins(since: wall - idleLimit) {
                // A wall clock set back since (a board without a clock) counts as no time idle.
                let idle = max(0, wall - kept.lastSeen)
                byKey[kept.key] = WebLogin(
                    name: kept.name, role: kept.role, csrf: kept.csrf, lastSeen: now - idle, credential: kept.credential
                )
                persistedAt[kept.key] = kept.lastSeen
            }
        } catch { report(error) }
    }

    /// The sessions still work in memory when the file cannot be written; said once, in the
    /// journal, since a restart would then log everyone out.
    private func report(_ error: UserStoreError) {
        guard !storeFailed else { return }
        storeFailed = true
        FileHandle.standardError.write(
            Data(
                "lineup-web: sessions are kept in memory only (a restart logs everyone out): \(error.description)\n"
                    .utf8))
    }
}

/// The login rate limit, the project's rule. Each bucket holds 5 attempts and refills one
/// every 12 s (so 5 a minute, sustained); every attempt, right or wrong, takes one from each
/// of its buckets, and an attempt finding one empty is refused without checking the password.
///
/// - A browser the page does not remember for the name: a bucket for its client address and
///   one for the name, shared by every address. 100 wrong passwords for one name take at least
///   95 × 12 s = 19 minutes from any number of addresses.
/// - A browser the page remembers for the name (its device cookie, from a right password for
///   that name; `UserStore.rememberDevice`): one bucket of its own for that name, and neither
///   of the others. Nobody elsewhere can empty it, so hammering "tom" from other addresses,
///   or from tom's own address, never keeps tom's browser out; a stolen cookie is worth 3
///   wrong passwords before the page forgets it.
public struct LoginLimiter: Sendable {
    public static let burst = 5.0
    public static let refillSeconds = 12.0

    private struct Bucket {
        var tokens: Double
        var at: Double
    }
    private var buckets: [String: Bucket] = [:]

    public init() {}

    /// Takes an attempt from each of the attempt's buckets, or says how many seconds until
    /// one is free. `device`: the digest of a device cookie the page remembers for `user`.
    public mutating func take(address: String, user: String, device: String? = nil, now: Double) -> Double? {
        let name = user.lowercased()
        let keys = device.map { ["device \($0) " + name] } ?? ["address " + address, "user " + name]
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

    /// Seconds until a browser the page does not remember may try from `address`, whatever
    /// the name; nil when its address's bucket has a token. Takes nothing.
    public func addressWait(address: String, now: Double) -> Double? {
        let bucket = refilled("address " + address, now: now)
        return bucket.tokens < 1 ? (1 - bucket.tokens) * Self.refillSeconds : nil
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
