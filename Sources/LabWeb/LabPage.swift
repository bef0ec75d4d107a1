import Foundation
import HTTPTypes
import Hummingbird
import LabStore
import PostgresNIO
import StationControl
import StationWeb
import WebAccounts

/// The lab's page has no station behind it: the station page's guards (accounts, sessions,
/// CSRF, login limit) are reused through `WebState`, whose link is then never asked.
struct NoStationLink: StationLink {
    func send<C: ControlCall>(_ call: C) async throws(ControlClientError) -> C.Reply {
        throw .notRunning(path: "(the lab's page controls no station)")
    }
    func watchBlocking(_ onEvent: (WatchEvent) -> Bool) throws(ControlClientError) {
        throw .notRunning(path: "(the lab's page controls no station)")
    }
}

/// Everything the lab page's routes share.
public final class LabState: Sendable {
    public let web: WebState
    /// The store, read with a researcher's login (SELECT only).
    public let connection: LabConnection
    /// The wall clock (seconds since 1970) the reachability rule is judged by; nil: the store's
    /// own clock, the one that stamped each heartbeat's arrival. A test hands in its own.
    let wallClock: (@Sendable () -> Double)?

    public init(users: UserStore, connection: LabConnection, wallClock: (@Sendable () -> Double)? = nil) {
        web = WebState(users: users, link: NoStationLink())
        self.connection = connection
        self.wallClock = wallClock
    }
}

/// One station as the lab's page shows it: its newest heartbeat and whether it is reachable.
public struct LabStationRow: Codable, Sendable, Equatable {
    public var id: String
    /// nil: the store has this station's log but never a heartbeat from it.
    public var name: String?
    public var reachable: Bool
    /// When its newest heartbeat reached the store (ISO 8601), and how long ago in seconds.
    public var lastSeen: String?
    public var secondsSinceSeen: Double?
    public var syncIntervalSeconds: Double?
    public var lineupdReachable: Bool?
    public var lineupdProblem: String?
    public var session: String?
    public var dog: String?
    public var mode: String?
    public var state: String?
    public var trial: Int?
    public var trials: Int?
    public var faults: [String]
    public var freeMegabytes: Int64?
    public var behindRows: Int64?
    public var oldestUnsynced: String?
    public var syncError: String?
}

public struct LabStationsReply: Codable, Sendable {
    public var rule: String
    public var now: String
    public var stations: [LabStationRow]
}

public enum LabPage {
    /// The project's rule for "reachable": a heartbeat reached the store within this many
    /// times the station's own sync interval (a run that takes longer than the interval delays
    /// its heartbeat; three intervals allow two of those before the station counts as silent).
    public static let silenceFactor = 3.0

    public static let rule =
        "reachable: a heartbeat within \(Int(silenceFactor)) × the station's sync interval (the project's rule)"

    static func iso(_ seconds: Double) -> String {
        let formatter = ISO8601DateFormatter()
        return formatter.string(from: Date(timeIntervalSince1970: seconds))
    }

    /// Every station the store knows, by name: the newest heartbeat of each, and those whose
    /// log was synced but that never sent one.
    public static func stations(_ state: LabState) async throws -> LabStationsReply {
        let store = try await LabStore.connect(state.connection)
        do {
            let reply = try await stations(store: store, wallClock: state.wallClock)
            await store.close()
            return reply
        } catch {
            await store.close()
            throw error
        }
    }

    static func stations(store: LabStore, wallClock: (@Sendable () -> Double)?) async throws -> LabStationsReply {
        let now: Double
        if let wallClock {
            now = wallClock()
        } else {
            let clock = try await store.rows("SELECT extract(epoch FROM now())::float8")
            now = try clock.first.map { try $0.decode(Double.self) } ?? Date().timeIntervalSince1970
        }
        var rows: [LabStationRow] = []
        for row in try await store.rows(
            """
            SELECT station_id, station_name, extract(epoch FROM received_at)::float8 AS seen, sync_interval_seconds,
                lineupd_reachable, lineupd_problem, session_id, dog, mode, state, trial, trials, faults,
                free_megabytes, behind_rows, oldest_unsynced_wall_ns, sync_error
            FROM public.station_latest
            """)
        {
            let cells = row.makeRandomAccess()
            let seen = try cells["seen"].decode(Double.self)
            let interval = try cells["sync_interval_seconds"].decode(Double.self)
            let since = now - seen
            rows.append(
                LabStationRow(
                    id: try cells["station_id"].decode(String.self),
                    name: try cells["station_name"].decode(String.self),
                    reachable: since <= silenceFactor * interval, lastSeen: iso(seen), secondsSinceSeen: since,
                    syncIntervalSeconds: interval,
                    lineupdReachable: try cells["lineupd_reachable"].decode(Bool.self),
                    lineupdProblem: try cells["lineupd_problem"].decode(String?.self),
                    session: try cells["session_id"].decode(String?.self),
                    dog: try cells["dog"].decode(String?.self), mode: try cells["mode"].decode(String?.self),
                    state: try cells["state"].decode(String?.self),
                    trial: try cells["trial"].decode(Int32?.self).map(Int.init),
                    trials: try cells["trials"].decode(Int32?.self).map(Int.init),
                    faults: try cells["faults"].decode([String].self),
                    freeMegabytes: try cells["free_megabytes"].decode(Int64?.self),
                    behindRows: try cells["behind_rows"].decode(Int64?.self),
                    oldestUnsynced: try cells["oldest_unsynced_wall_ns"].decode(Int64?.self).map {
                        iso(Double($0) / 1e9)
                    },
                    syncError: try cells["sync_error"].decode(String?.self)))
        }
        let known = Set(rows.map(\.id))
        for row in try await store.rows("SELECT id FROM public.stations ORDER BY id") {
            let id = try row.decode(String.self)
            guard !known.contains(id) else { continue }
            rows.append(LabStationRow(id: id, reachable: false, faults: []))
        }
        rows.sort { ($0.name ?? "\u{10FFFF}", $0.id) < ($1.name ?? "\u{10FFFF}", $1.id) }
        return LabStationsReply(rule: rule, now: iso(now), stations: rows)
    }

    /// Answered without a session (as on the station's page): the login page and the assets.
    public static func router(state: LabState) -> Router<WebContext> {
        let router = Router(context: WebContext.self)
        router.add(middleware: GuardMiddleware(state: state.web))
        router.get("/login") { _, _ in Assets.response(LabAssets.loginHTML, type: "text/html; charset=utf-8") }
        router.get("/") { _, _ in Assets.response(LabAssets.pageHTML, type: "text/html; charset=utf-8") }
        router.get("/static/login.js") { _, _ in
            Assets.response(Assets.loginJS, type: "text/javascript; charset=utf-8")
        }
        router.get("/static/app.css") { _, _ in Assets.response(Assets.appCSS, type: "text/css; charset=utf-8") }
        router.get("/static/lab.css") { _, _ in Assets.response(LabAssets.pageCSS, type: "text/css; charset=utf-8") }
        router.get("/static/lab.js") { _, _ in
            Assets.response(LabAssets.pageJS, type: "text/javascript; charset=utf-8")
        }
        router.post("/api/login") { request, context in try await WebApp.login(request, context, state.web) }
        router.post("/api/logout") { _, context in await WebApp.logout(context, state.web) }
        router.get("/api/me") { _, context in
            let login = try context.requireLogin()
            return try encoded(["name": login.name, "role": login.role.rawValue, "csrf": login.csrf])
        }
        router.get("/api/stations") { _, context in
            _ = try context.requireLogin()
            do {
                return try encoded(try await stations(state))
            } catch let error as LabStoreError {
                throw WebError(.serviceUnavailable, "lab-store", error.description)
            }
        }
        return router
    }

    static func encoded<T: Encodable>(_ value: T) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return WebApp.json(String(decoding: try encoder.encode(value), as: UTF8.self))
    }

    /// Listens on every interface's 8090 unless told: beside a station's page on 8080 on one
    /// machine, and a port that needs no root (the project's default).
    public static let defaultHost = "0.0.0.0"
    public static let defaultPort = 8090

    public static func application(state: LabState, host: String, port: Int) -> some ApplicationProtocol {
        Application(
            router: router(state: state), configuration: .init(address: .hostname(host, port: port), serverName: nil))
    }
}
