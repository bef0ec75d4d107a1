import Figures
import Foundation
import PostgresNIO
import SessionLog
import TrainingEngine

/// A filter word the lab store has nothing for.
public struct LabFilterError: Error, Equatable, CustomStringConvertible {
    public let kind: String
    public let text: String
    public let store: String

    public var description: String { "no \(kind) \"\(text)\" in the lab store \(store)" }
}

extension LogFilter {
    /// The values of the store's filter parameters `$1`…`$9`, in the order the station log's
    /// queries bind `?1`…`?9`: dog, session, since, until, then `sessionCondition`'s mode,
    /// program, phase, step and handler. Always bound, never written into the SQL.
    public var labBindings: PostgresBindings {
        var binds = PostgresBindings(capacity: 9)
        binds.append(dogId)
        binds.append(sessionId)
        binds.append(since)
        binds.append(until)
        binds.append(mode?.rawValue)
        binds.append(program)
        binds.append(phase)
        binds.append(step)
        binds.append(handler)
        return binds
    }

    /// `sessionCondition` on the store: the same choices of mode, program, phase, step and
    /// handler on the session alias `s`, over `$5`…`$9` of `labBindings`. The casts type the
    /// parameters a NULL leaves untyped.
    public func labSessionCondition(_ s: String = "s") -> String {
        """
        ($5::text IS NULL OR \(s).mode = $5::text)
            AND ($6::text IS NULL OR \(s).program_id IN (SELECT id FROM store.program WHERE name = $6::text))
            AND ($7::text IS NULL OR \(s).phase = $7::text) AND ($8::text IS NULL OR \(s).step = $8::text)
            AND ($9::text IS NULL OR \(s).handler_id IN (SELECT id FROM store.handler WHERE code = $9::text))
        """
    }

    /// The trials `LogReader.scanTrials` selects with this filter, on the store's trial alias `t`
    /// and session alias `s`: the dog and session, the trial's own wall time (`since`
    /// inclusive, `until` exclusive) and the session's choices.
    public var labTrialCondition: String {
        """
        ($1::text IS NULL OR s.dog_id = $1::text) AND ($2::text IS NULL OR s.id = $2::text)
            AND ($3::bigint IS NULL OR t.wall_ns >= $3::bigint) AND ($4::bigint IS NULL OR t.wall_ns < $4::bigint)
            AND \(labSessionCondition())
        """
    }
}

extension LabReader {
    static let place = "the lab store"

    /// The trials after corrections that `filter` selects, decoded as on a log. Streamed; each
    /// session's settings only when `settings` is set.
    func scanTrials(
        _ filter: LogFilter, samples: Bool, settings: Bool = false, _ body: (ScoredTrial, TrialContext) throws -> Void
    ) async throws {
        var decoder = TrialRowDecoder(samples: samples)
        let query = PostgresQuery(
            unsafeSQL: """
                SELECT t.outcome, t.latency_ns, t.layout, t.seen, s.dog_id, d.name, s.id, s.wall_ns, t.id,
                    \(settings ? "s.settings" : "NULL::text")
                FROM store.trial_current t JOIN store.session s ON s.id = t.session_id
                    JOIN store.dog d ON d.id = s.dog_id
                WHERE \(filter.labTrialCondition)
                """, binds: filter.labBindings)
        do {
            for try await row in try await store.connection.query(query, logger: store.logger) {
                let (outcome, latency, layout, seen, dogId, dog, sessionId, sessionWall, trialId, sessionSettings) =
                    try row.decode(
                        (String, Int64?, String, String?, String, String, String, Int64, String, String?).self)
                var layoutText = layout
                var seenText = seen
                let trial = layoutText.withUTF8 { layoutBytes in
                    guard seenText != nil else {
                        return decoder.trial(
                            outcome: outcome, latencyNs: latency, layout: UnsafeRawBufferPointer(layoutBytes), seen: nil
                        )
                    }
                    return seenText!.withUTF8 { seenBytes in
                        decoder.trial(
                            outcome: outcome, latencyNs: latency, layout: UnsafeRawBufferPointer(layoutBytes),
                            seen: UnsafeRawBufferPointer(seenBytes))
                    }
                }
                guard let trial else {
                    leaveOutLayout(trial: trialId)
                    continue
                }
                try body(
                    trial,
                    TrialContext(
                        dogId: dogId, dog: dog, sessionId: sessionId, sessionWallNs: sessionWall,
                        sessionSettings: sessionSettings))
            }
        } catch {
            throw store.map(error)
        }
    }

    // MARK: What the researcher typed, resolved as on a log (`FilterRules`)

    /// A dog by full id, unique id prefix or name (any case of ASCII letters). Two dogs of one
    /// name (two stations' "Rex") are two dogs: the name is refused, naming both ids.
    public func resolveDog(_ text: String) async throws -> String {
        if let id = try await resolveId(text, table: "dog", kind: "dog") { return id }
        // lower() finds every name NOCASE does (and some more, which sameDogName drops).
        let rows = try await store.rows("SELECT id, name FROM store.dog WHERE lower(name) = lower(\(text))")
        let matches = try rows.map { try $0.decode((String, String).self) }
            .filter { FilterRules.sameDogName($0.1, text) }.map(\.0)
        do {
            return try FilterRules.chooseDogByName(text, matches: matches)
        } catch SessionLogError.unknownDog {
            throw LabFilterError(kind: "dog", text: text, store: store.display)
        }
    }

    /// A session by full id or unique id prefix.
    public func resolveSession(_ text: String) async throws -> String {
        guard let id = try await resolveId(text, table: "session", kind: "session") else {
            throw LabFilterError(kind: "session", text: text, store: store.display)
        }
        return id
    }

    /// A program by the name sessions recorded.
    public func resolveProgram(_ name: String) async throws -> String {
        let known = try await strings(
            "SELECT DISTINCT p.name FROM store.session s JOIN store.program p ON p.id = s.program_id")
        return try FilterRules.checkProgram(name, known: known, in: Self.place)
    }

    /// A handler by pseudonymous code (one code on two stations is one handler to the filter,
    /// as it is in a merged log).
    public func resolveHandler(_ code: String) async throws -> String {
        let known = try await strings("SELECT DISTINCT code FROM store.handler")
        return try FilterRules.checkHandler(code, known: known, in: Self.place)
    }

    /// `PHASE/STEP` or a whole `PHASE`, checked against the steps sessions recorded.
    public func resolveStep(_ text: String) async throws -> (phase: String, step: String?) {
        _ = try FilterRules.stepWords(text)
        let rows = try await store.rows("SELECT DISTINCT phase, step FROM store.session WHERE phase IS NOT NULL")
        var known: [(phase: String, step: String?)] = []
        for row in rows {
            let (phase, step) = try row.decode((String, String?).self)
            known.append((phase, step))
        }
        // Sorted as SQLite's ORDER BY phase, step sorts them: by bytes, a missing step first.
        known.sort { a, b in
            if a.phase != b.phase { return Self.bytesPrecede(a.phase, b.phase) }
            guard let right = b.step else { return false }
            guard let left = a.step else { return true }
            return Self.bytesPrecede(left, right)
        }
        return try FilterRules.checkStep(text, known: known, in: Self.place)
    }

    /// One text column, sorted by its bytes as SQLite sorts text.
    func strings(_ sql: String) async throws -> [String] {
        try await store.rows(PostgresQuery(unsafeSQL: sql)).map { try $0.decode(String.self) }
            .sorted(by: Self.bytesPrecede)
    }

    /// SQLite's BINARY order of text: by UTF-8 bytes.
    static func bytesPrecede(_ a: String, _ b: String) -> Bool { a.utf8.lexicographicallyPrecedes(b.utf8) }

    /// The whole id `text` is, or the one id it is a prefix of (`FilterRules.idWords`).
    func resolveId(_ text: String, table: String, kind: String) async throws -> String? {
        let words = FilterRules.idWords(text)
        let exact = try await store.rows(
            "SELECT id FROM \(unescaped: "store." + table) WHERE id = \(words.whole)")
        if !exact.isEmpty { return words.whole }
        guard let prefix = words.prefix else { return nil }
        let matches = try await store.rows(
            "SELECT id FROM \(unescaped: "store." + table) WHERE starts_with(id, \(prefix)) LIMIT 2"
        ).map { try $0.decode(String.self) }
        return try FilterRules.chooseByPrefix(text, matches: matches, kind: kind)
    }
}
