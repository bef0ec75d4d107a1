import Foundation
import Hummingbird
import ReadingRows
import SessionLog
import StationControl
import WebAccounts

// The page in the field (issue 37): the handler's guess, the running session's name in the
// trainer's words, and what makes the page installable on a phone's home screen.

/// The running session as the trainer names it: dog, step and the time it started.
struct SessionName: Encodable {
    var session: String
    var dog: String
    var step: String?
    /// When it started, in the station's time, as the log gives it.
    var started: String
    /// The time of day alone, `HH:MM`.
    var clock: String
}

extension WebApp {
    /// The routes of the page in the field. The manifest, the service worker, the offline page
    /// and the icon answer without a session (`isPublic`): a browser fetches the manifest
    /// without its cookie, and the offline page is kept for when the station cannot be reached.
    static func addFieldRoutes(_ router: Router<WebContext>, state: WebState) {
        router.get("/manifest.webmanifest") { _, _ in
            Assets.response(FieldAssets.manifest, type: "application/manifest+json; charset=utf-8")
        }
        // At the root, so the worker's scope is the whole page.
        router.get("/sw.js") { _, _ in
            Assets.response(FieldAssets.serviceWorker, type: "text/javascript; charset=utf-8")
        }
        router.get("/offline.html") { _, _ in
            Assets.response(FieldAssets.offlineHTML, type: "text/html; charset=utf-8")
        }
        router.get("/static/icon.svg") { _, _ in Assets.response(FieldAssets.iconSVG, type: "image/svg+xml") }
        router.get("/static/field.js") { _, _ in
            Assets.response(FieldAssets.fieldJS, type: "text/javascript; charset=utf-8")
        }
        router.get("/static/field.css") { _, _ in
            Assets.response(FieldAssets.fieldCSS, type: "text/css; charset=utf-8")
        }

        // The handler's guess: lineupd's `guess`, the request `lineupctl guess` sends, so
        // `stats --guesses` counts it. The reply is the page's own shape (the trial and the
        // handler's own guess), so no key of it reads like a layout's.
        router.post("/api/guess") { request, context in
            try context.require(\.entersGuesses, "enter a guess")
            struct Guess: Decodable { var station: String }
            let guess = try await decodeBody(Guess.self, request, context)
            let reply: GuessRecorded
            do throws(ControlClientError) {
                reply = try await state.link.send(GuessEntry(station: guess.station))
            } catch {
                throw WebError.from(error)
            }
            return json(#"{"trial":\#(reply.trial),"guess":"# + jsonString(reply.station) + "}")
        }

        // The running session's name for the trainer's screen: read from the log (a running
        // double-blind session's dog, step and start are what every refusal already says).
        router.get("/api/session/name") { request, context in
            _ = try context.requireLogin()
            guard let id = request.uri.queryParameters["id"].map(String.init), !id.isEmpty else {
                throw WebError(.badRequest, "bad-request", "give the session's id: ?id=ID")
            }
            return try readLog {
                let reader = try state.reader()
                var filter = LogFilter()
                filter.sessionId = id
                if let blind = try reader.withheldSessions(filter).first {
                    return try encoded(
                        SessionName(
                            session: blind.id, dog: blind.dog, step: blind.step, started: blind.started,
                            clock: String(blind.started.suffix(5))))
                }
                guard let found = try reader.sessions(filter, limit: 1).first else {
                    throw WebError(.notFound, "unknown", "no session \(id) in the log")
                }
                let step = found.phase.map { phase in found.step.map { "\(phase)/\($0)" } ?? phase }
                let time = found.started.dropFirst(11).prefix(5)
                return try encoded(
                    SessionName(
                        session: found.id, dog: found.dog, step: step, started: found.started, clock: String(time)))
            }
        }
    }
}
