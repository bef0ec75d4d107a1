import Figures
import Foundation
import ReadingRows
import TrainingEngine

/// `lineupctl report`: what the HTML report draws, gathered in one read and one ordered pass over
/// the trials (`OrderedTrialScan`: every trial of the chosen dog, or of every dog, counts toward
/// its samples' exposure; those the filter chose are counted), assembled by `ReportAssembly`, with
/// each session's threshold figures and staircase track (`ThresholdCounter`). A dog's learning
/// curve has at most `maxPoints` points: beyond that, consecutive sessions are pooled
/// (ceil(sessions / maxPoints) per point) and the point's figures are the pooled trials'.
public struct ReportReading: Reading {
    public static let name = ReadingName.report
    public var filter: LogFilter
    public var maxPoints: Int
    /// When the report says it was made (`Made …`), in nanoseconds since 1970 (UTC).
    public var generatedWallNs: Int64

    public init(_ filter: LogFilter = LogFilter(), maxPoints: Int = 120, generatedWallNs: Int64? = nil) {
        self.filter = filter
        self.maxPoints = maxPoints
        self.generatedWallNs = generatedWallNs ?? Int64((Date().timeIntervalSince1970 * 1e9).rounded())
    }

    public func read<Source: RowSource>(from source: Source) throws -> ReportData {
        try source.readRows { rows in
            // The tallies are arrays by station number: every station in range before any is counted.
            try ReportInputs.checkStations(&rows)
            var programs: [String: ReportAssembly.ProgramRow] = [:]
            try rows.scan("SELECT id, name, content FROM \(table: "program")", []) { row in
                programs[try row.text(0) ?? ""] = ReportAssembly.ProgramRow(
                    name: try row.text(1) ?? "", content: try row.text(2) ?? "")
            }
            let sessions = try ReportInputs.sessions(&rows, filter)
            var assembly: ReportAssembly
            do {
                assembly = try ReportAssembly(
                    scope: ReportAssembly.Scope(
                        dogId: filter.dogId, sessionId: filter.sessionId, since: filter.since, until: filter.until),
                    maxPoints: maxPoints, sessions: sessions, programs: programs)
            } catch let word as ReportAssembly.UnknownWord {
                throw ReadingError.unknownWord(place: rows.place, word)
            }
            // Each session's threshold figures and track (its trials come in order here).
            var thresholds = ThresholdCounter(
                samples: try ThresholdInputs.samples(&rows), grouping: .session, recordsTrack: true)
            let conditions = try ThresholdInputs.conditions(&rows)
            try ThresholdInputs.addProcedures(&rows, filter, to: &thresholds)
            let started = Dictionary(sessions.map { ($0.id, $0.wallNs) }, uniquingKeysWith: { first, _ in first })
            try OrderedTrialScan.scan(&rows, filter) { trial, context, inScope in
                assembly.addTrial(
                    trial, dogId: context.dogId, dog: context.dog, sessionId: context.sessionId, inScope: inScope)
                guard inScope, let wallNs = started[context.sessionId] else { return }
                var counted = context
                counted.sessionWallNs = wallNs
                thresholds.add(trial, context: counted, conditions: conditions[context.sessionId])
            }
            // Suggestions, comments, clicks and faults of the sessions in scope.
            try rows.scan(
                "SELECT session_id, kind, text FROM \(table: "session_note") ORDER BY wall_ns, mono_ns, \(byBytes: "id")",
                []
            ) { row in
                assembly.addNote(
                    sessionId: try row.text(0) ?? "", kind: try row.text(1) ?? "", text: try row.text(2) ?? "")
            }
            // Events in the time window: since (parameter 1) inclusive, until (2) exclusive.
            let window: [SQLValue] = [.integer(filter.since), .integer(filter.until)]
            try rows.scan(
                """
                SELECT session_id, click_onset_latency_ns FROM \(table: "event")
                WHERE kind = 'click' AND click_onset_latency_ns IS NOT NULL AND \(ReportInputs.inWindow)
                """, window
            ) { row in
                assembly.addClick(sessionId: try row.text(0), onsetNs: try row.integer(1) ?? 0)
            }
            try rows.scan(
                "SELECT session_id, detail, station FROM \(table: "event") WHERE kind = 'fault' AND \(ReportInputs.inWindow)",
                window
            ) { row in
                let sessionId = try row.text(0)
                let station = try row.integer(2).map { assembly.stationSaid(session: sessionId, Int($0)) }
                assembly.addFault(sessionId: sessionId, named: FaultDetail.name(try row.text(1), station: station))
            }
            try rows.scan(
                """
                SELECT dog_id, session_id, phase, step, criterion, wall_ns FROM \(table: "milestone")
                WHERE (\(text: 1) IS NULL OR dog_id = \(text: 1)) ORDER BY wall_ns, \(byBytes: "id")
                """, [.text(filter.dogId)]
            ) { row in
                assembly.addMilestone(
                    dogId: try row.text(0) ?? "", sessionId: try row.text(1), phase: try row.text(2) ?? "",
                    step: try row.text(3), criterion: try row.text(4), wallNs: try row.integer(5) ?? 0)
            }
            var samples: [ReportAssembly.SampleRow] = []
            try rows.scan("SELECT id, label, kind, source, collection, processing FROM \(table: "sample")", []) { row in
                samples.append(
                    ReportAssembly.SampleRow(
                        id: try row.text(0) ?? "", label: try row.text(1) ?? "", kind: try row.text(2) ?? "",
                        facts: SampleFacts(
                            source: try row.text(3), collection: try row.text(4), processing: try row.text(5))))
            }
            var data = assembly.finish(samples: samples, generatedWallNs: generatedWallNs)
            data.thresholds = thresholds.rows()
            return data
        }
    }
}

extension RowSource {
    /// `lineupctl report` on this log or store: `ReportReading`.
    public func report(_ filter: LogFilter = LogFilter(), maxPoints: Int = 120) throws -> ReportData {
        try ReportReading(filter, maxPoints: maxPoints).read(from: self)
    }
}

/// What the report reads besides the trials and the threshold inputs (`ThresholdInputs`).
enum ReportInputs {
    /// An event's own wall time in the window: since (parameter 1) inclusive, until (2) exclusive.
    static let inWindow: ReadingSQL = """
        (\(integer: 1) IS NULL OR wall_ns >= \(integer: 1)) AND (\(integer: 2) IS NULL OR wall_ns < \(integer: 2))
        """

    /// A `trial_station` row whose station is off the board (`TrialRowDecoder.stations`) is the
    /// source's to refuse (a log) or leave out, naming it (the store, which may hold one from
    /// before its v9).
    static func checkStations<Scanner: RowScanner>(_ rows: inout Scanner) throws {
        let stations = TrialRowDecoder.stations
        let scanner = rows
        try rows.scan(
            """
            SELECT trial_id, CAST(station AS TEXT) FROM \(table: "trial_station")
            WHERE \(notInteger: "station") OR station NOT BETWEEN \(integer: 1) AND \(integer: 2)
            ORDER BY \(byBytes: "trial_id"), station
            """, [.integer(Int64(stations.lowerBound)), .integer(Int64(stations.upperBound))]
        ) { row in
            let outside =
                "station \(try row.text(1) ?? "NULL"), outside \(stations.lowerBound) to \(stations.upperBound)"
            try scanner.badRow(
                BadRow(
                    table: "trial_station", id: "(trial \(try row.text(0) ?? "-"))", problem: outside, reason: outside))
        }
    }

    /// The sessions the filter chooses by dog, session, mode, program, phase, step and handler,
    /// oldest first (then by id), each with its first end: the time window is the assembly's.
    static func sessions<Scanner: RowScanner>(_ rows: inout Scanner, _ filter: LogFilter) throws
        -> [ReportAssembly.SessionRow]
    {
        var sessions: [ReportAssembly.SessionRow] = []
        // Parameters 3 and 4 (the times) are named only so that PostgreSQL types every parameter.
        try rows.scan(
            """
            SELECT s.id, s.dog_id, d.name, s.wall_ns, s.phase, s.step, s.exercise, s.mode, s.station, s.station_id,
                s.program_id, e.how, e.detail, s.settings
            FROM \(table: "session") s JOIN \(table: "dog") d ON d.id = s.dog_id
                LEFT JOIN (SELECT session_id, how, detail,
                        row_number() OVER (PARTITION BY session_id ORDER BY wall_ns) AS nth
                    FROM \(table: "session_end")) e ON e.session_id = s.id AND e.nth = 1
            WHERE (\(text: 1) IS NULL OR s.dog_id = \(text: 1)) AND (\(text: 2) IS NULL OR s.id = \(text: 2))
                AND (\(integer: 3) IS NULL OR TRUE) AND (\(integer: 4) IS NULL OR TRUE)
                AND \(LogFilter.sessionCondition)
            ORDER BY s.wall_ns, \(byBytes: "s.id")
            """, filter.readingBinds
        ) { row in
            sessions.append(
                ReportAssembly.SessionRow(
                    id: try row.text(0) ?? "", dogId: try row.text(1) ?? "", dog: try row.text(2) ?? "",
                    wallNs: try row.integer(3) ?? 0, phase: try row.text(4), step: try row.text(5),
                    exercise: try row.text(6), mode: try row.text(7) ?? "", station: try row.text(8),
                    stationId: try row.text(9), programId: try row.text(10), endedHow: try row.text(11),
                    endDetail: try row.text(12), settings: try row.text(13)))
        }
        return sessions
    }
}

/// A reading's refusal of what its source holds, in words naming the source (`RowScanner.place`).
public enum ReadingError: Error, Equatable, CustomStringConvertible {
    /// A row holds a word this lineup does not know (a session's mode from a newer lineup).
    case unknownWord(place: String, ReportAssembly.UnknownWord)

    public var description: String {
        switch self {
        case .unknownWord(let place, let word):
            "\(place)'s \(word.table) row \(word.row) has \(word.column) \"\(word.value)\", which this lineupctl does not "
                + "know (known: \(word.known.joined(separator: ", "))); was it written by a newer lineup or edited by hand?"
        }
    }
}
