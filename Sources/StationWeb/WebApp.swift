import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import NIOCore
import StationControl
import Synchronization
import WebAccounts

/// What a request to the page carries besides itself: the client's address (for the login
/// limit) and, once the session cookie is checked, who is logged in.
public struct WebContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    public var address: String
    public var login: WebLogin?
    public var token: String?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        address = source.channel.remoteAddress?.ipAddress ?? "unknown"
    }

    /// A request body over this is refused before it is read to the end.
    public var maxUploadSize: Int { WebApp.maxBody }
}

/// Everything the routes share.
public final class WebState: Sendable {
    public let users: UserStore
    public let link: any StationLink
    public let sessions: WebSessions
    public let hub: LiveHub
    /// The session log, opened read-only for each request that reads it; nil: no log screens.
    public let logPath: String?
    let limiter = LimiterBox()
    /// The password checks' own thread and lines (PasswordChecks.swift).
    public let checks: PasswordChecks
    /// Where logins are read, limited and answered (LoginThread.swift).
    public let loginThread: LoginThread
    /// Seconds on a monotonic scale; a test hands in its own.
    public let now: @Sendable () -> Double
    /// How long a refused login (429, 503) waits before its answer (`WebApp.refusedLoginWait`).
    public let refusedLoginWait: Double

    public init(
        users: UserStore, link: any StationLink, hub: LiveHub? = nil, logPath: String? = nil,
        checks: PasswordChecks = PasswordChecks(), loginThread: LoginThread = LoginThread(),
        refusedLoginWait: Double = WebApp.refusedLoginWait,
        now: @escaping @Sendable () -> Double = { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }
    ) {
        self.users = users
        self.checks = checks
        self.loginThread = loginThread
        self.refusedLoginWait = refusedLoginWait
        self.link = link
        self.sessions = WebSessions(store: users)
        self.hub = hub ?? LiveHub(link: link)
        self.logPath = logPath
        self.now = now
    }

    /// Whether the account behind a login is still there as it logged in (same password hash,
    /// same role). `lineupctl web user remove` and `passwd` change the file, not this process:
    /// checking it on each request and live frame ends such a session without a restart.
    /// An unreadable accounts file ends it too: better logged out than let through.
    public func accountHolds(_ login: WebLogin) -> Bool {
        guard let user = try? users.user(named: login.name) else { return false }
        return user.passwordHash == login.credential && user.role == login.role
    }
}

/// The login limit, shared by the logins and the login gate (on an event loop, which cannot
/// wait for an actor): each use holds the lock for a dictionary lookup or two.
final class LimiterBox: Sendable {
    private let limiter = Mutex(LoginLimiter())
    func take(address: String, user: String, device: String?, now: Double) -> Double? {
        limiter.withLock { $0.take(address: address, user: user, device: device, now: now) }
    }
    func addressWait(address: String, now: Double) -> Double? {
        limiter.withLock { $0.addressWait(address: address, now: now) }
    }
}

/// A refusal of the page's own, in one JSON shape: `{"error":{"code":..,"message":..}}`.
public struct WebError: Error, Sendable {
    public var status: HTTPResponse.Status
    public var code: String
    public var message: String
    public var headers: HTTPFields = [:]

    public init(_ status: HTTPResponse.Status, _ code: String, _ message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    public var response: Response {
        var fields = headers
        fields[.contentType] = "application/json; charset=utf-8"
        fields[.cacheControl] = "no-store"
        return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(string: bodyText)))
    }

    var bodyText: String { #"{"error":{"code":"# + jsonString(code) + #","message":"# + jsonString(message) + "}}" }

    /// lineupd's answer, as the page shows it: its refusals keep their code and words.
    static func from(_ error: ControlClientError) -> WebError {
        switch error {
        case .refused(let refusal):
            let status: HTTPResponse.Status =
                switch refusal.code {
                case .blind: .forbidden
                case .badRequest: .badRequest
                case .unknown: .notFound
                default: .conflict
                }
            return WebError(status, refusal.code.rawValue, refusal.message)
        default:
            return WebError(.serviceUnavailable, "not-live", error.description)
        }
    }
}

public enum WebApp {
    /// The largest request body: a session start with its samples is under 2 KiB.
    public static let maxBody = 16 * 1024
    public static let cookieName = "lineup_session"
    /// The browser's own cookie, sent only to the login: the page remembers a browser that
    /// logged in as a name (`LoginLimiter`). A year, renewed at each login.
    public static let deviceCookieName = "lineup_device"
    /// Seconds a refused login (429, 503) waits at least before it is answered (up to half as
    /// long again, at random: `WebState.refusalWait`). A flood that sends its next login as soon
    /// as one is answered was answered as fast as lineup-web could (issue 33: 1,100 refusals a
    /// second from 250 addresses, the trainer's requests in line behind them); waiting costs
    /// nothing but a timer, bounds such a flood to under one login a second for each connection
    /// it holds, and tells a person nothing new (Retry-After says more).
    public static let refusedLoginWait = 1.0
    /// Answered without a session: the login page, its call, the static assets, and what makes
    /// the page installable (its manifest, service worker and offline page).
    static func isPublic(_ method: HTTPRequest.Method, _ path: String) -> Bool {
        (method == .get
            && (path == "/login" || path.hasPrefix("/static/") || path == "/manifest.webmanifest"
                || path == "/sw.js" || path == "/offline.html"))
            || (method == .post && path == "/api/login")
    }

    public static func router(state: WebState) -> Router<WebContext> {
        let router = Router(context: WebContext.self)
        router.add(middleware: GuardMiddleware(state: state))

        // Pages and assets, all from the binary.
        router.get("/login") { _, _ in Assets.response(Assets.loginHTML, type: "text/html; charset=utf-8") }
        router.get("/") { _, _ in Assets.response(Assets.appHTML, type: "text/html; charset=utf-8") }
        router.get("/static/app.js") { _, _ in Assets.response(Assets.appJS, type: "text/javascript; charset=utf-8") }
        router.get("/static/login.js") { _, _ in
            Assets.response(Assets.loginJS, type: "text/javascript; charset=utf-8")
        }
        router.get("/static/app.css") { _, _ in Assets.response(Assets.appCSS, type: "text/css; charset=utf-8") }
        router.get("/static/screens.js") { _, _ in
            Assets.response(Assets.screensJS, type: "text/javascript; charset=utf-8")
        }
        router.get("/static/screens.css") { _, _ in
            Assets.response(Assets.screensCSS, type: "text/css; charset=utf-8")
        }

        // On the logins' own thread (LoginThread), never the pool the logged-in pages use.
        router.post("/api/login") { request, context in
            try await withTaskExecutorPreference(state.loginThread) { try await login(request, context, state) }
        }
        router.post("/api/logout") { _, context in await logout(context, state) }
        router.get("/api/me") { _, context in
            let login = try context.requireLogin()
            // What the role may do, from the role table (the rule the routes below apply), so the
            // page shows a button only to whom the station will obey.
            return json(
                #"{"name":"# + jsonString(login.name) + #","role":"# + jsonString(login.role.rawValue)
                    + #","runsSessions":"# + (login.role.runsSessions ? "true" : "false")
                    + #","csrf":"# + jsonString(login.csrf) + "}")
        }
        router.get("/api/status") { _, _ in try await forward(StatusRequest(), state) }
        router.get("/api/layout") { _, context in
            let login = try context.requireLogin()
            guard let view = LiveHub.layoutView(login.role) else {
                throw WebContext.refusal(login.role, "see the layout")
            }
            return try await forward(LayoutRequest(view: view), state)
        }
        router.post("/api/session/start") { request, context in
            try context.require(\.runsSessions, "start a session")
            var call = try await decodeBody(SessionRequest.self, request, context)
            // The page asks, whatever the body claims: lineupd's rule of who may fix a
            // double-blind step's layouts rests on it.
            call.asker = .page
            return try await forward(call, state)
        }
        router.post("/api/ready") { request, context in
            try context.require(\.pressesReady, "press ready")
            _ = try await readBody(request, context)
            return try await forward(ReadyRequest(), state)
        }
        router.post("/api/abort") { request, context in
            try context.require(\.runsSessions, "abort a trial")
            _ = try await readBody(request, context)
            return try await forward(AbortRequest(), state)
        }
        router.post("/api/session/end") { request, context in
            try context.require(\.runsSessions, "end a session")
            let call = try await decodeBody(SessionEndRequest.self, request, context, emptyIs: "{}")
            return try await forward(call, state)
        }
        // A session cut short goes on (lineupd's `session-resume`): the Live screen's resume button.
        router.post("/api/session/resume") { request, context in
            try context.require(\.runsSessions, "resume a session")
            _ = try await readBody(request, context)
            return try await forward(SessionResumeRequest(), state)
        }
        router.post("/api/press") { request, context in
            try context.require(\.runsSessions, "press the clicker or error")
            let call = try await decodeBody(ButtonPress.self, request, context)
            guard ["clicker", "error"].contains(call.button) else {
                throw WebError(.badRequest, "bad-request", "field 'button' should be \"clicker\" or \"error\"")
            }
            return try await forward(call, state)
        }
        addLogRoutes(router, state: state)
        addFieldRoutes(router, state: state)
        addQueueRoutes(router, state: state)
        router.get("/api/events") { _, context in
            let login = try context.requireLogin()
            let stream = await state.hub.subscribe(role: login.role)
            let headers: HTTPFields = [
                .contentType: "text/event-stream", .cacheControl: "no-store",
            ]
            return Response(
                status: .ok, headers: headers,
                body: ResponseBody { writer in
                    // The browser reconnects by itself after a second when the stream ends.
                    try await writer.write(ByteBuffer(string: "retry: 1000\n\n"))
                    // A removed account, a new password or a logout ends the stream at its next frame
                    // (status comes every 0.5 s), checked at most once a second.
                    var checked = state.now()
                    for await frame in stream {
                        if state.now() - checked >= 1 {
                            checked = state.now()
                            guard state.accountHolds(login) else { break }
                            // Logged out on another page of the same session: its streams end too.
                            if let token = context.token, await !state.sessions.holds(token) { break }
                        }
                        try await writer.write(ByteBuffer(string: frame.text))
                    }
                    try await writer.finish(nil)
                })
        }
        return router
    }

    public static func logout(_ context: WebContext, _ state: WebState) async -> Response {
        if let token = context.token { await state.sessions.close(token) }
        var response = json(#"{"ok":true}"#)
        response.headers[.setCookie] = "\(cookieName)=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0"
        return response
    }

    public static func login(_ request: Request, _ context: WebContext, _ state: WebState) async throws -> Response {
        struct Credentials: Decodable {
            var name: String
            var password: String
        }
        let credentials = try await decodeBody(Credentials.self, request, context)
        // A device cookie counts only if the page remembers it for this very name.
        let deviceToken = request.cookies[deviceCookieName]?.value ?? ""
        let deviceKey = deviceToken.isEmpty ? nil : WebSessions.key(deviceToken)
        var device: String?
        if let deviceKey {
            do throws(UserStoreError) {
                if try state.users.deviceRemembers(key: deviceKey, name: credentials.name) { device = deviceKey }
            } catch {
                throw WebError(.internalServerError, "accounts", error.description)
            }
        }
        if let wait = state.limiter.take(
            address: context.address, user: credentials.name, device: device, now: state.now())
        {
            await state.waitBeforeRefusing()
            throw WebError.rateLimited(seconds: wait)
        }
        let (users, name, password) = (state.users, credentials.name, credentials.password)
        let checked = await state.checks.run(remembered: device != nil) {
            Result { () throws(UserStoreError) -> WebUser? in try users.check(name: name, password: password) }
        }
        guard let checked else {
            await state.waitBeforeRefusing()
            throw WebError.checksBusy
        }
        let user: WebUser?
        do { user = try checked.get() } catch {
            throw WebError(.internalServerError, "accounts", error.description)
        }
        guard let user else {
            if let device { try? state.users.deviceWrongPassword(key: device, name: credentials.name) }
            throw WebError(.unauthorized, "login", "wrong name or password")
        }
        // Remembered for this name: the cookie's own token when the page knows it (a browser
        // remembered for another name too), else a new one (never a token the page did not make).
        let known = deviceKey.map { (try? state.users.deviceIsKnown(key: $0)) == true } ?? false
        let newDevice = known ? deviceToken : randomToken()
        do {
            try state.users.rememberDevice(
                key: WebSessions.key(newDevice), name: user.name, now: Date().timeIntervalSince1970)
        } catch {
            FileHandle.standardError.write(
                Data("lineup-web: a browser was not remembered: \(error.description)\n".utf8))
        }
        let (token, login) = await state.sessions.open(
            name: user.name, role: user.role, credential: user.passwordHash, now: state.now())
        var response = json(
            #"{"name":"# + jsonString(login.name) + #","role":"# + jsonString(login.role.rawValue) + #","csrf":"#
                + jsonString(login.csrf) + "}")
        response.headers[.setCookie] = "\(cookieName)=\(token); Path=/; HttpOnly; SameSite=Strict"
        response.headers.append(
            HTTPField(
                name: .setCookie,
                value: "\(deviceCookieName)=\(newDevice); Path=/api/login; HttpOnly; SameSite=Strict; Max-Age=31536000")
        )
        return response
    }

    static func forward<C: ControlCall>(_ call: C, _ state: WebState) async throws -> Response {
        let reply: C.Reply
        do throws(ControlClientError) {
            reply = try await state.link.send(call)
        } catch {
            throw WebError.from(error)
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return json(String(decoding: try encoder.encode(reply), as: UTF8.self))
    }

    public static func json(_ text: String, status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status, headers: [.contentType: "application/json; charset=utf-8", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    /// The body, at most `maxBody` bytes; more is refused before any of it reaches lineupd.
    static func readBody(_ request: Request, _ context: WebContext) async throws -> ByteBuffer {
        var request = request
        do {
            return try await request.collectBody(upTo: maxBody)
        } catch {
            throw WebError(.contentTooLarge, "too-large", "the request is over \(maxBody / 1024) KiB")
        }
    }

    /// A JSON body read into `type`, or one error naming the field that is wrong.
    static func decodeBody<T: Decodable>(
        _ type: T.Type, _ request: Request, _ context: WebContext, emptyIs: String? = nil
    ) async throws -> T {
        let buffer = try await readBody(request, context)
        var data = Data(buffer.readableBytesView)
        if data.isEmpty, let emptyIs { data = Data(emptyIs.utf8) }
        do {
            return try JSONDecoder().decode(type, from: data)
        } catch {
            let refusal = ControlProtocol.badRequest(error)
            let message = refusal.message.replacingOccurrences(of: "per line", with: "per request")
            throw WebError(.badRequest, "bad-request", message)
        }
    }
}

extension WebContext {
    public func requireLogin() throws -> WebLogin {
        guard let login else { throw WebError(.unauthorized, "login", "log in first") }
        return login
    }

    /// Refuses a role that may not do this, naming the role and the action.
    func require(_ allowed: KeyPath<WebRole, Bool>, _ action: String) throws {
        let login = try requireLogin()
        guard login.role[keyPath: allowed] else { throw Self.refusal(login.role, action) }
    }

    /// The one refusal of a role, a sentence with its article: "an assistant may not ...".
    static func refusal(_ role: WebRole, _ action: String) -> WebError {
        let article = role.rawValue.first.map { "aeiou".contains($0) } == true ? "an" : "a"
        return WebError(.forbidden, "role", "\(article) \(role.rawValue) may not \(action)")
    }
}

/// Every request passes here first: the session cookie, CSRF on anything that changes state,
/// and the page's errors in one shape. Security headers on every answer.
public struct GuardMiddleware: RouterMiddleware {
    public typealias Context = WebContext
    let state: WebState

    public init(state: WebState) { self.state = state }

    public func handle(_ request: Request, context: WebContext, next: (Request, WebContext) async throws -> Response)
        async throws -> Response
    {
        var response: Response
        do {
            response = try await check(request, context: context, next: next)
        } catch let error as WebError {
            response = error.response
        } catch let error as HTTPError {
            response = WebError(error.status, "http", error.body ?? error.status.reasonPhrase).response
        }
        for (name, value) in Self.securityHeaders { response.headers[name] = value }
        return response
    }

    /// On every answer, the login gate's too. The page loads nothing from elsewhere and runs no
    /// inline script; no framing.
    static let securityHeaders: [(HTTPField.Name, String)] = [
        (
            .contentSecurityPolicy,
            "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'"
        ),
        (.xContentTypeOptions, "nosniff"), (HTTPField.Name("Referrer-Policy")!, "same-origin"),
    ]

    private func check(_ request: Request, context: WebContext, next: (Request, WebContext) async throws -> Response)
        async throws -> Response
    {
        var context = context
        let path = request.uri.path
        if let token = request.cookies[WebApp.cookieName]?.value, !token.isEmpty,
            let login = await state.sessions.find(token, now: state.now())
        {
            if state.accountHolds(login) {
                context.login = login
                context.token = token
            } else {
                await state.sessions.close(token)
            }
        }
        let changes = request.method != .get && request.method != .head
        if changes {
            // CSRF: the Origin must be this host, the body JSON (a cross-site form cannot send
            // it without asking), and the session's token must come back in a header.
            guard originMatches(origin: request.headers[.origin], host: request.head.authority) else {
                throw WebError(
                    .forbidden, "csrf", "refused: the request did not come from this station's page (Origin)")
            }
            let type = request.headers[.contentType] ?? ""
            guard type.hasPrefix("application/json") else {
                throw WebError(.unsupportedMediaType, "bad-request", "send JSON (Content-Type: application/json)")
            }
            if let login = context.login, path != "/api/login",
                !sameToken(request.headers[.init("X-CSRF-Token")!], login.csrf)
            {
                throw WebError(.forbidden, "csrf", "refused: the page's token is missing or stale; reload the page")
            }
        }
        guard context.login != nil || WebApp.isPublic(request.method, path) else {
            if path.hasPrefix("/api/") { throw WebError(.unauthorized, "login", "log in first") }
            return Response(status: .seeOther, headers: [.location: "/login"])
        }
        return try await next(request, context)
    }
}

public enum WebServer {
    /// The address and port lineup-web listens on unless told: every interface (a phone on the
    /// station's Wi-Fi must reach it) on 8080, a port that needs no root.
    public static let defaultHost = "0.0.0.0"
    public static let defaultPort = 8080
    /// Connections the kernel holds for lineup-web to accept (`listen`'s backlog).
    public static let backlog = 4096

    /// The page's server: every connection guarded by `limits` (ConnectionGuard.swift).
    public static func application(
        state: WebState, host: String, port: Int, limits: ConnectionLimits = ConnectionLimits()
    ) -> some ApplicationProtocol {
        let table = ConnectionTable(limits: limits)
        return Application(
            router: WebApp.router(state: state),
            // A login the page would refuse anyway is refused before any HTTP, and a connection
            // over a cap before anything is built for it (LoginGate.swift).
            server: HTTPServerBuilder { responder in
                GatedHTTP1Channel(
                    responder: responder, configuration: HTTP1Channel.Configuration(), table: table,
                    refusal: { state.loginRefusal(address: $0) }, wait: { state.refusalWait() })
            },
            // The queue of connections waiting to be accepted: the kernel's own cap (somaxconn,
            // 4,096 on Debian 12) rather than Hummingbird's 256. A full queue drops a new
            // connection's first packet, and the browser tries again only a second later.
            configuration: .init(address: .hostname(host, port: port), serverName: nil, backlog: Self.backlog))
    }
}
