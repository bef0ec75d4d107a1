import Figures
import Foundation
import Hummingbird
import ProgramFiles
import ReadingRows
import SessionLog
import StationControl
import TrainingEngine
import WebAccounts

// The sitting's queue and the day view (issue 37). lineup-web holds the queue (in its own state
// file, UserStore+Queue.swift), so every browser logged in to the station sees the same one and
// a restart keeps it; lineupd stays free of it and of the network. Each dog is started in turn
// on its next step from its progress (`LogReader.nextStep`, the rule `lineupctl progress`
// shows), through the same session start as every other (lineupd checks the repetitions).
// Who may change the queue is the role table's (`WebRole.editsQueue`); nothing in it is a
// layout, so no role learns one through it.

/// What a trainer queues for one dog: everything of a session start but its step and
/// exercise, which its progress decides when it starts.
struct QueuedSession: Codable, Sendable {
    var dog: String
    var program: String
    /// Rounds of the trainer-led exercise (nil: the program's repeats); lineupd checks them.
    var repetitions: Int?
    var durationSeconds: Double?
    var samples: [String]?
    var unlabelled: Bool?
    var handler: String?
}

/// One entry as the page shows it: the dog, its next step as its progress stands now, and who
/// queued it when. The samples and handler only to a role that runs sessions.
struct QueueLine: Encodable {
    var id: String
    var place: Int
    var dog: String
    var program: String
    var repetitions: Int?
    var durationSeconds: Double?
    var samples: [String]?
    var unlabelled: Bool?
    var handler: String?
    var queuedBy: String
    /// `HH:MM`, the station's time.
    var queuedAt: String
    /// Its next step now (it may move on before it starts: a dog queued twice); nil with `why`.
    var next: NextStep?
    var why: String?
}

/// A session of the day as the trainer names it: dog, step and time, and how it stands.
struct DaySession: Encodable {
    var session: String
    var dog: String
    var step: String?
    var mode: String
    /// `HH:MM`, the station's time.
    var time: String
    /// `running`, `ended`, or lineupd's word for how it ended (`cut-short`, ...).
    var state: String
    /// Rounds or trials and hits; nil while a double-blind session runs (withheld).
    var trials: Int?
    var hits: Int?
}

struct DayView: Encodable {
    var date: String
    var past: [DaySession]
    var running: DaySession?
    var queued: [QueueLine]
    /// Why counts are left out (a double-blind session runs), or nil.
    var withheld: String?
}

extension WebApp {
    static func addQueueRoutes(_ router: Router<WebContext>, state: WebState) {
        router.get("/api/queue") { _, context in
            let login = try context.requireLogin()
            return try encoded(try await queueLines(state, role: login.role))
        }
        router.post("/api/queue") { request, context in
            try context.require(\.editsQueue, "change the queue")
            let login = try context.requireLogin()
            let entry = try await decodeBody(QueuedSession.self, request, context)
            let next = try await check(entry, state)
            let text = String(decoding: try JSONEncoder().encode(entry), as: UTF8.self)
            let place: Int?
            do throws(UserStoreError) {
                place = try state.users.enqueue(
                    QueuedEntry(id: randomToken(), entry: text, by: login.name, added: Date().timeIntervalSince1970))
            } catch {
                throw WebError(.internalServerError, "queue", error.description)
            }
            guard let place else {
                throw WebError(
                    .conflict, "queue-full", "the queue holds \(UserStore.queueLimit) dogs: start or remove one first")
            }
            struct Queued: Encodable {
                var place: Int
                var next: NextStep?
            }
            return try encoded(Queued(place: place, next: next))
        }
        router.post("/api/queue/remove") { request, context in
            try context.require(\.editsQueue, "change the queue")
            struct Which: Decodable { var id: String }
            let which = try await decodeBody(Which.self, request, context)
            let removed: Bool
            do throws(UserStoreError) { removed = try state.users.dequeue(id: which.id) } catch {
                throw WebError(.internalServerError, "queue", error.description)
            }
            guard removed else { throw WebError(.notFound, "unknown", "that dog is no longer in the queue") }
            return json(#"{"ok":true}"#)
        }
        // Starts a queued dog on its next step; the entry leaves the queue once lineupd started
        // it (refused, it stays, with lineupd's words).
        router.post("/api/queue/start") { request, context in
            try context.require(\.runsSessions, "start a session")
            struct Which: Decodable { var id: String }
            let which = try await decodeBody(Which.self, request, context)
            let queued: [QueuedEntry]
            do throws(UserStoreError) { queued = try state.users.queued() } catch {
                throw WebError(.internalServerError, "queue", error.description)
            }
            guard let row = queued.first(where: { $0.id == which.id }), let entry = decoded(row) else {
                throw WebError(.notFound, "unknown", "that dog is no longer in the queue")
            }
            let program = try await offered(entry.program, state)
            try await refuseWhileBlind(state, .outcome, "the dogs' progress is")
            let next = try readLog { () throws -> NextStep? in
                let reader = try state.reader()
                return try reader.nextStep(dogId: reader.resolveDog(entry.dog), program: program)
            }
            guard let next else {
                throw WebError(
                    .conflict, "done",
                    "\(entry.dog) has passed every step of \(entry.program): set up its session on Set-up instead")
            }
            var call = SessionRequest(
                dog: entry.dog, program: entry.program, step: next.step, exercise: next.exercise,
                samples: entry.samples ?? [], handler: entry.handler)
            call.repetitions = entry.repetitions
            call.durationSeconds = entry.durationSeconds
            call.unlabelled = entry.unlabelled
            call.asker = .page
            let started: SessionStarted
            do throws(ControlClientError) {
                started = try await state.link.send(call)
            } catch {
                throw WebError.from(error)
            }
            _ = try? state.users.dequeue(id: row.id)
            struct Started: Encodable {
                var started: SessionStarted
                var dog: String
                var next: NextStep
            }
            return try encoded(Started(started: started, dog: entry.dog, next: next))
        }
        router.get("/api/day") { request, context in
            let login = try context.requireLogin()
            return try encoded(
                try await day(state, role: login.role, date: request.uri.queryParameters["date"].map(String.init)))
        }
    }

    static func decoded(_ row: QueuedEntry) -> QueuedSession? {
        try? JSONDecoder().decode(QueuedSession.self, from: Data(row.entry.utf8))
    }

    /// The program lineupd offers by that name, as it would run it.
    static func offered(_ name: String, _ state: WebState) async throws -> Program {
        let about: StationAbout
        do throws(ControlClientError) {
            about = try await state.link.send(AboutRequest())
        } catch {
            throw WebError.from(error)
        }
        guard let found = about.programs.first(where: { $0.name == name && $0.refused == nil }),
            let text = found.text, let program = try? Program.parse(toml: text, source: found.source)
        else {
            let names = about.programs.filter { $0.refused == nil }.map(\.name).joined(separator: ", ")
            throw WebError(.notFound, "unknown", "no program \"\(name)\" on this station (programs: \(names))")
        }
        return program
    }

    /// A queued dog must be in the log and its program offered; its repetitions are checked
    /// against its next step now by the rule lineupd applies at the start (`Step.exercise`).
    /// Its next step now, or nil (every step passed, or withheld while a double-blind session runs).
    static func check(_ entry: QueuedSession, _ state: WebState) async throws -> NextStep? {
        let program = try await offered(entry.program, state)
        let next = try readLog { () throws -> NextStep? in
            let reader = try state.reader()
            let dog: String
            do { dog = try reader.resolveDog(entry.dog) } catch SessionLogError.unknownDog {
                throw WebError(
                    .notFound, "unknown", "no dog \"\(entry.dog)\" in the log: add it on the Dogs screen first")
            }
            return try state.blindNow() ? nil : reader.nextStep(dogId: dog, program: program)
        }
        guard let repetitions = entry.repetitions, let next,
            let step = program.step(
                phase: String(next.step.prefix { $0 != "/" }), step: String(next.step.drop { $0 != "/" }.dropFirst())),
            let exercise = step.exercises.first(where: { $0.id == next.exercise })
        else { return next }
        do throws(RepetitionsRefused) {
            _ = try step.exercise(exercise, repetitions: repetitions)
        } catch {
            throw WebError(
                .badRequest, "bad-request", "\(entry.dog)'s next step, \(next.step) of \(program.name): \(error)")
        }
        return next
    }

    /// The queue as `role` may see it, each dog's next step as its progress stands now (none
    /// while a double-blind session runs: progress is withheld then).
    static func queueLines(_ state: WebState, role: WebRole) async throws -> [QueueLine] {
        let rows: [QueuedEntry]
        do throws(UserStoreError) { rows = try state.users.queued() } catch {
            throw WebError(.internalServerError, "queue", error.description)
        }
        guard !rows.isEmpty else { return [] }
        let blind = try readLog { try state.blindNow() }
        var programs: [String: Program] = [:]
        var lines: [QueueLine] = []
        for (index, row) in rows.enumerated() {
            guard let entry = decoded(row) else { continue }
            var line = QueueLine(
                id: row.id, place: index + 1, dog: entry.dog, program: entry.program, repetitions: entry.repetitions,
                durationSeconds: entry.durationSeconds, queuedBy: row.by,
                queuedAt: clock(Date(timeIntervalSince1970: row.added)))
            if role.runsSessions {
                line.samples = entry.samples
                line.unlabelled = entry.unlabelled
                line.handler = entry.handler
            }
            if blind {
                line.why = "its step is chosen from its progress when it starts"
            } else {
                do {
                    if programs[entry.program] == nil {
                        programs[entry.program] = try await offered(entry.program, state)
                    }
                    let program = programs[entry.program]!
                    line.next = try readLog { () throws -> NextStep? in
                        let reader = try state.reader()
                        return try reader.nextStep(dogId: reader.resolveDog(entry.dog), program: program)
                    }
                    if line.next == nil { line.why = "every step of \(entry.program) is passed" }
                } catch let error as WebError {
                    line.why = error.message
                }
            }
            lines.append(line)
        }
        return lines
    }

    /// The day's sessions from the log (past and running) and the queue.
    static func day(_ state: WebState, role: WebRole, date: String?) async throws -> DayView {
        let calendar = Calendar.current
        var start = calendar.startOfDay(for: Date())
        if let date {
            let parts = date.split(separator: "-").compactMap { Int($0) }
            guard parts.count == 3,
                let day = calendar.date(from: DateComponents(year: parts[0], month: parts[1], day: parts[2]))
            else { throw WebError(.badRequest, "bad-request", "give the day as YYYY-MM-DD, not \"\(date)\"") }
            start = day
        }
        let end = calendar.date(byAdding: .day, value: 1, to: start) ?? start
        let running: String? = try? await state.link.send(StatusRequest()).session
        let (sessions, withheld) = try readLog { () throws -> ([SessionSummary], [WithheldSession]) in
            let reader = try state.reader()
            var filter = LogFilter()
            filter.since = Int64(start.timeIntervalSince1970 * 1e9)
            filter.until = Int64(end.timeIntervalSince1970 * 1e9)
            return (try reader.sessions(filter, limit: 500), try reader.withheldSessions())
        }
        let blind = Set(withheld.map(\.id))
        var iso = ISOTimeFormatter()
        var view = DayView(
            date: String(iso.string(wallNs: Int64(start.timeIntervalSince1970 * 1e9)).prefix(10)),
            past: [], queued: try await queueLines(state, role: role),
            withheld: withheld.isEmpty ? nil : WithheldSession.sentence(withheld, "the day's outcome counts are"))
        for s in sessions {
            let step = s.phase.map { phase in s.step.map { "\(phase)/\($0)" } ?? phase }
            var line = DaySession(
                session: s.id, dog: s.dog, step: step, mode: s.mode.rawValue,
                time: String(s.started.dropFirst(11).prefix(5)),
                state: s.endedHow ?? (s.id == running ? "running" : "not ended"),
                trials: withheld.isEmpty ? s.results.trials : nil, hits: withheld.isEmpty ? s.results.hits : nil)
            if blind.contains(s.id) { line.state = "running" }
            if line.state == "running" { view.running = line } else { view.past.append(line) }
        }
        return view
    }

    /// `HH:MM` of a moment, in the station's time.
    static func clock(_ date: Date) -> String {
        var iso = ISOTimeFormatter()
        return String(iso.string(wallNs: Int64(date.timeIntervalSince1970 * 1e9)).dropFirst(11).prefix(5))
    }
}

extension WebState {
    /// Whether a double-blind session runs now (the log reader's one rule of "running").
    func blindNow() throws -> Bool { try !reader().withheldSessions().isEmpty }
}
