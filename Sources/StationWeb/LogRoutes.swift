import Figures
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import ProgramFiles
import ReadingRows
import Readings
import Report
import SessionLog
import StationControl
import Synchronization
import TrainingEngine

// The screens that read the log: dogs and their progress, samples, sessions, trials, stats,
// the report and exports. lineup-web opens the log read-only and calls the very functions
// lineupctl calls (one definition per figure, docs/figures.md); it never writes the log:
// additions (a dog, a session's comment) go to lineupd over the control socket.

extension WebApp {
    static func addLogRoutes(_ router: Router<WebContext>, state: WebState) {
        router.get("/api/dogs") { _, context in
            _ = try context.requireLogin()
            let dogs = try readLog { try state.reader().dogs() }
            // The counts leave a running double-blind session out: without them, with why.
            if let why = try await blindReason(state, .outcome, "the dogs' session and trial counts are") {
                return try encoded(dogs.map { DogWithoutCounts($0, withheld: why) })
            }
            return try encoded(dogs)
        }
        router.post("/api/dogs") { request, context in
            try context.require(\.runsSessions, "add a dog")
            let entry = try await decodeBody(DogEntry.self, request, context)
            return try await forward(entry, state)
        }
        // A dog's page: progress per phase of its programs (`lineupctl progress`) and its
        // sessions with their outcome counts (`lineupctl sessions --dog`), newest first.
        router.get("/api/dogs/{dog}") { request, context in
            _ = try context.requireLogin()
            let name = try pathPart(context, "dog")
            // Its sessions' outcome counts grow trial by trial: a handler would learn each
            // double-blind trial's outcome as it happens (the rule of docs/daemon.md, "Security").
            try await refuseWhileBlind(state, .outcome, "a dog's sessions and progress are")
            return try readLog {
                let reader = try state.reader()
                let id = try reader.resolveDog(name)
                guard let dog = try reader.dogs().first(where: { $0.id == id }) else {
                    throw SessionLogError.unknownDog(name)
                }
                var filter = LogFilter(dogId: id)
                filter.newestFirst = true
                return try encoded(
                    DogPage(
                        dog: dog, notes: try reader.dogNotes(dogId: id), progress: try reader.progress(dogId: id),
                        sessions: try reader.sessions(filter)))
            }
        }
        // A dog's notes as they stand from now on: lineupd writes a new dated row, the earlier
        // notes stay in the log (`lineupctl dogs note`).
        router.post("/api/dogs/{dog}/note") { request, context in
            try context.require(\.runsSessions, "write a dog's notes")
            struct Notes: Decodable { var text: String }
            let dog = try pathPart(context, "dog")
            let notes = try await decodeBody(Notes.self, request, context)
            return try await forward(DogNoteEntry(dog: dog, text: notes.text), state)
        }
        router.get("/api/samples") { request, context in
            _ = try context.requireLogin()
            let kind = try request.uri.queryParameters["kind"].map { text in
                guard let kind = SampleKind(rawValue: String(text)) else {
                    throw WebError(
                        .badRequest, "bad-request",
                        "kind '\(text)': give target, control, blank or distractor")
                }
                return kind
            }
            let samples = try readLog { try state.reader().samples(kind: kind) }
            // A sample's use count grows with each trial it stands in: while a double-blind
            // session runs it would say which samples are in the lineup now.
            if let why = try await blindReason(state, .sampleUse, "the samples' use counts are") {
                return try encoded(samples.map { SampleWithoutUses($0, withheld: why) })
            }
            return try encoded(samples)
        }
        router.get("/api/samples/{sample}") { _, context in
            _ = try context.requireLogin()
            let label = try pathPart(context, "sample")
            try await refuseWhileBlind(state, .sampleUse, "a sample's uses are")
            return try readLog {
                let reader = try state.reader()
                return try encoded(try reader.sample(id: reader.resolveSample(label)))
            }
        }
        router.get("/api/sessions") { _, context in
            _ = try context.requireLogin()
            try await refuseWhileBlind(state, .outcome, "the sessions with their outcome counts are")
            var filter = LogFilter()
            filter.newestFirst = true
            return try readLog { try encoded(try state.reader().sessions(filter, limit: 200)) }
        }
        router.get("/api/sessions/{session}") { _, context in
            _ = try context.requireLogin()
            let id = try pathPart(context, "session")
            try await refuseWhileBlind(state, .layout, "a session's trials and layouts are")
            return try readLog {
                let reader = try state.reader()
                return try encoded(try reader.session(id: reader.resolveSession(id)))
            }
        }
        router.post("/api/sessions/{session}/note") { request, context in
            try context.require(\.runsSessions, "add a comment to a session")
            struct Comment: Decodable { var text: String }
            let session = try pathPart(context, "session")
            let comment = try await decodeBody(Comment.self, request, context)
            // An empty comment is the page's slip, said here rather than by lineupd.
            guard !comment.text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
                throw WebError(.badRequest, "bad-request", "field 'text' is empty: write the comment first")
            }
            return try await forward(SessionNoteEntry(session: session, text: comment.text), state)
        }
        router.get("/api/trials") { _, context in
            _ = try context.requireLogin()
            try await refuseWhileBlind(state, .layout, "trials and their layouts are")
            var filter = LogFilter()
            filter.newestFirst = true
            return try readLog { try encoded(try state.reader().trials(filter, limit: 500)) }
        }
        router.get("/api/stats") { request, context in
            _ = try context.requireLogin()
            let text = request.uri.queryParameters["by"].map(String.init) ?? "dog"
            guard let by = StatsGrouping(rawValue: text) else {
                throw WebError(.badRequest, "bad-request", "by '\(text)': give dog, session, sample or station")
            }
            // By station or sample a table says where the targets stood; by dog or session its
            // counts grow with each double-blind trial's outcome.
            try await refuseWhileBlind(state, .outcome, "statistics by \(by.rawValue) are")
            return try readLog { try encoded(try state.reader().stats(by: by)) }
        }
        router.get("/api/report") { _, context in
            _ = try context.requireLogin()
            try await refuseWhileBlind(state, .outcome, "the report is")
            return try readLog {
                let html = ReportHTML.render(try state.reader().report(), scope: "all dogs")
                return download(html, type: "text/html; charset=utf-8", name: "lineup-report.html", attach: false)
            }
        }
        router.get("/api/export") { request, context in
            _ = try context.requireLogin()
            let whatText = request.uri.queryParameters["what"].map(String.init) ?? ""
            guard let what = ExportTable(rawValue: whatText) else {
                throw WebError(
                    .badRequest, "bad-request",
                    "what '\(whatText)': give \(ExportTable.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            let formatText = request.uri.queryParameters["format"].map(String.init) ?? "csv"
            guard let format = ExportFormat(rawValue: formatText) else {
                throw WebError(.badRequest, "bad-request", "format '\(formatText)': give csv or jsonl")
            }
            // A download cannot say what it leaves out: while a double-blind session runs, every
            // table would leave it out (its session, trials, events, guesses, samples' uses).
            try await refuseWhileBlind(state, .layout, "exports of \(what.rawValue) are")
            // The log is opened, the dog and session named resolved (as `lineupctl export --dog
            // --session` resolves them) and the query made before the answer starts: a log that
            // cannot be read, or a dog it does not know, is an error status, not a download cut short.
            let reader = try readLog { try state.reader() }
            let dogText = request.uri.queryParameters["dog"].map(String.init)
            let sessionText = request.uri.queryParameters["session"].map(String.init)
            var filter = LogFilter()
            filter.dogId = try dogText.map { text in try readLog { try reader.resolveDog(text) } }
            filter.sessionId = try sessionText.map { text in try readLog { try reader.resolveSession(text) } }
            _ = try readLog { try reader.exportQuery(what, filter) }
            let chosen = filter
            var headers: HTTPFields = [
                .contentType: format == .csv ? "text/csv; charset=utf-8" : "application/jsonl; charset=utf-8",
                .cacheControl: "no-store",
            ]
            // The file name lineupctl's examples write to (`lineupctl export --what trials > trials.csv`).
            let narrowed = [dogText, sessionText.map { String($0.prefix(8)) }].compactMap { $0 }.map(fileNamePart)
            let name = ([what.rawValue] + narrowed).joined(separator: "-")
            headers[.contentDisposition] = "attachment; filename=\"\(name).\(format.rawValue)\""
            return Response(
                status: .ok, headers: headers,
                body: ResponseBody { writer in
                    try await streamExport(reader, what, format, filter: chosen) { try await writer.write($0) }
                    try await writer.finish(nil)
                })
        }
        // Session set-up in words: every program lineupd would accept, each step with its mode,
        // lineup (SetupWords), criterion and exercises with their instructions and duration.
        router.get("/api/programs") { _, context in
            _ = try context.requireLogin()
            let about: StationAbout
            do throws(ControlClientError) {
                about = try await state.link.send(AboutRequest())
            } catch {
                throw WebError.from(error)
            }
            let programs = about.programs.compactMap { offered -> ProgramSetup? in
                guard offered.refused == nil, let text = offered.text,
                    let program = try? Program.parse(toml: text, source: offered.source)
                else { return nil }
                return ProgramSetup(program)
            }
            return try encoded(programs)
        }
        // Station health: status (sensors, faults, free space, sound), about and version as
        // lineupd answers them. Sensors' levels come in status only for a researcher-safe view:
        // the same status every page's live stream already carries.
        router.get("/api/health") { _, context in
            _ = try context.requireLogin()
            let health: Health
            do throws(ControlClientError) {
                let status = try await state.link.send(StatusRequest())
                let version = try await state.link.send(VersionRequest())
                let about = try await state.link.send(AboutRequest())
                health = Health(
                    status: status, version: version, log: about.log,
                    programs: about.programs.map { HealthProgram(name: $0.name, refused: $0.refused) })
            } catch {
                throw WebError.from(error)
            }
            return try encoded(health)
        }
    }

    /// While a double-blind session runs, nothing that names a station of a trial's layout
    /// leaves lineup-web, for any role: the handler may be logged in under any account. The
    /// one rule of "running" is the log reader's (`LogReader.withheldSessions`, the rule every
    /// `lineupctl` reading follows): the refusal names the session and says when it is readable.
    /// `fact` is what the route would give of the session: the one rule (`Visibility`) says
    /// whether a reader of the log may see it while the session runs.
    static func refuseWhileBlind(_ state: WebState, _ fact: SessionFact, _ what: String) async throws {
        if let why = try await blindReason(state, fact, what) { throw WebError(.forbidden, "blind", why) }
    }

    /// Why `what` (with its verb: "the report is") is withheld now, or nil.
    static func blindReason(_ state: WebState, _ fact: SessionFact, _ what: String) async throws -> String? {
        guard !Visibility.shows(fact, to: .researcher, in: .doubleBlindRunning) else { return nil }
        let withheld = try readLog { try state.reader().withheldSessions() }
        return withheld.isEmpty ? nil : WithheldSession.sentence(withheld, what)
    }

    /// The log's errors as the page shows them: an unknown name is 404, the rest its words.
    static func readLog<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as WebError {
            throw error
        } catch let error as SessionLogError {
            switch error {
            case .unknownDog, .unknownSession, .unknownSample, .unknownTrial:
                throw WebError(.notFound, "unknown", error.description)
            case .withheld:
                throw WebError(.forbidden, "blind", error.description)
            case .ambiguousId, .ambiguousDogName, .invalidInput, .malformedDate:
                throw WebError(.badRequest, "bad-request", error.description)
            default:
                throw WebError(.serviceUnavailable, "log", error.description)
            }
        } catch {
            throw WebError(.internalServerError, "log", String(describing: error))
        }
    }

    static func encoded<T: Encodable>(_ value: T) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return json(String(decoding: try encoder.encode(value), as: UTF8.self))
    }

    /// A dog's name or a session's id as part of a file name: letters, digits, '-' and '_'
    /// only (a name may hold anything; a header's quoted file name may not).
    public static func fileNamePart(_ text: String) -> String {
        String(text.map { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") ? $0 : "_" })
    }

    static func download(_ text: String, type: String, name: String, attach: Bool) -> Response {
        var headers: HTTPFields = [.contentType: type, .cacheControl: "no-store"]
        headers[.contentDisposition] = (attach ? "attachment" : "inline") + "; filename=\"\(name)\""
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    /// How many chunks an export may run ahead of the connection: a download holds this many
    /// chunks of 64 KiB in lineup-web's memory, and the one being filled, however big the log.
    public static let exportChunksAhead = 2

    /// `lineupctl export`'s bytes, written by the same writer, handed to `write` chunk by chunk
    /// as rows are read. The export reads one SQLite transaction on a thread of its own (it
    /// blocks); it waits whenever `exportChunksAhead` chunks are not yet written, and stops
    /// when `write` throws (the browser went away). `produced` is told each chunk's number as
    /// it is handed over (for tests).
    public static func streamExport(
        _ reader: LogReader, _ what: ExportTable, _ format: ExportFormat, filter: LogFilter = LogFilter(),
        chunkSize: Int = 1 << 16,
        produced: @escaping @Sendable (Int) -> Void = { _ in }, write: (ByteBuffer) async throws -> Void
    ) async throws {
        let (chunks, continuation) = AsyncThrowingStream<ByteBuffer, any Error>.makeStream()
        let credits = DispatchSemaphore(value: exportChunksAhead)
        let stop = ExportStop()
        let producer = Thread {
            do {
                var count = 0
                let sink = ByteSink(capacity: chunkSize) { bytes in
                    credits.wait()
                    if stop.stopped { return false }
                    count += 1
                    produced(count)
                    continuation.yield(ByteBuffer(bytes: bytes))
                    return true
                }
                try reader.export(what, format: format, filter: filter, to: sink)
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        producer.start()
        // However this ends, a producer waiting for a credit wakes, sees the stop, and ends.
        defer {
            stop.stop()
            credits.signal()
        }
        for try await chunk in chunks {
            try await write(chunk)
            credits.signal()
        }
    }
}

/// Set once an export's reader is gone.
final class ExportStop: Sendable {
    private let flag = Atomic<Bool>(false)
    var stopped: Bool { flag.load(ordering: .acquiring) }
    func stop() { flag.store(true, ordering: .releasing) }
}

extension WebState {
    func reader() throws -> LogReader {
        guard let logPath else {
            throw WebError(.serviceUnavailable, "log", "lineup-web was started without the log (--db)")
        }
        return try SessionLog.openReader(path: logPath)
    }
}

/// A dog of the list without its session and trial counts, and why they are withheld.
struct DogWithoutCounts: Encodable {
    var id: String
    var name: String
    var born: String?
    var notes: String?
    var added: String
    var countsWithheld: String

    init(_ dog: DogSummary, withheld: String) {
        id = dog.id
        name = dog.name
        born = dog.born
        notes = dog.notes
        added = dog.added
        countsWithheld = withheld
    }
}

/// A sample of the list without its use count, and why it is withheld.
struct SampleWithoutUses: Encodable {
    var id: String
    var label: String
    var kind: SampleKind
    /// Encoded flat beside the rest, as the listing's own sample.
    var facts: SampleFacts
    var added: String
    var notes: Int
    var usesWithheld: String

    init(_ sample: SampleSummary, withheld: String) {
        id = sample.id
        label = sample.label
        kind = sample.kind
        facts = sample.facts
        added = sample.added
        notes = sample.notes
        usesWithheld = withheld
    }

    enum CodingKeys: String, CodingKey { case id, label, kind, added, notes, usesWithheld }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(label, forKey: .label)
        try c.encode(kind, forKey: .kind)
        try facts.encode(to: encoder)
        try c.encode(added, forKey: .added)
        try c.encode(notes, forKey: .notes)
        try c.encode(usesWithheld, forKey: .usesWithheld)
    }
}

/// A dog's name, a sample's label or a session's id in the path, percent-decoded: the page
/// encodes them (`encodeURIComponent`), so a name with a space or an accent reaches the log as
/// it was typed.
private func pathPart(_ context: WebContext, _ name: String) throws -> String {
    let raw = try context.parameters.require(name)
    return raw.removingPercentEncoding ?? raw
}

struct DogPage: Encodable {
    var dog: DogSummary
    /// Oldest first; the last is the dog's notes now (`dog.notes`).
    var notes: [NoteLine]
    var progress: [PhaseProgress]
    var sessions: [SessionSummary]
}

struct Health: Encodable {
    var status: StationStatus
    var version: StationVersion
    var log: String
    var programs: [HealthProgram]
}

struct HealthProgram: Encodable {
    var name: String
    var refused: String?
}

/// A program as the set-up screen shows it.
struct ProgramSetup: Encodable {
    struct StepSetup: Encodable {
        var step: String
        var title: String
        var description: String
        var mode: String
        var lineup: String
        var criterion: String
        var exercises: [ExerciseSetup]
    }
    struct ExerciseSetup: Encodable {
        var id: String
        var title: String
        var instruction: String
        var durationSeconds: Double
        var repeats: Int?
        var trials: Int?
    }
    var name: String
    var title: String
    var steps: [StepSetup]

    init(_ program: Program) {
        name = program.name
        title = program.title
        steps = program.phases.flatMap { phase in
            phase.steps.map { step in
                StepSetup(
                    step: "\(phase.id)/\(step.id)", title: step.title, description: step.description,
                    mode: step.mode.rawValue, lineup: step.lineup.inWords, criterion: step.completionRule,
                    exercises: step.exercises.map {
                        ExerciseSetup(
                            id: $0.id, title: $0.title, instruction: $0.instruction,
                            durationSeconds: $0.durationSeconds,
                            repeats: step.mode == .trainerLed ? $0.repeats : nil,
                            trials: step.mode == .trainerLed ? nil : $0.trials)
                    })
            }
        }
    }
}
