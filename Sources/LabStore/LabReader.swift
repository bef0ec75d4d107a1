import Foundation
import PostgresNIO
import SessionLog
import TrainingEngine

/// Why the lab store cannot be read, with what a person needs to act.
public enum LabReadError: Error, Equatable, CustomStringConvertible {
    /// The store was migrated by a newer lineup: its rows may mean what this one cannot read.
    case newerStore(store: String, unknown: [String])
    /// The store lacks migrations this lineupctl reads through (an older lineup-sync made it).
    case olderStore(store: String, missing: [String])
    case notAStore(store: String)

    public var description: String {
        switch self {
        case .newerStore(let store, let unknown):
            "the lab store \(store) has migrations this lineupctl does not know (\(unknown.joined(separator: ", "))): "
                + "read it with a lineupctl at least as new as the lineup-sync that migrated it"
        case .olderStore(let store, let missing):
            "the lab store \(store) lacks migrations (\(missing.joined(separator: ", "))): "
                + "its owner runs `lineup-sync --migrate` of this version on it"
        case .notAStore(let store):
            "\(store) is not a lab store (no public.lab_migration): its owner creates it with `lineup-sync --migrate`"
        }
    }
}

/// The researcher's reading of the lab store (the lineup_researcher role: SELECT only). The
/// figures come from the same code as on a station's log: the rows are scanned here and
/// handed to SessionLog's `StatsGrouper` and `TrialRowDecoder`, then `Tally`.
public struct LabReader: Sendable {
    public let store: LabStore

    /// Connects and checks the store's migrations against those this build knows.
    public static func open(_ connection: LabConnection) async throws -> LabReader {
        let store = try await LabStore.connect(connection)
        do {
            let reader = LabReader(store: store)
            try await reader.checkSchema()
            return reader
        } catch {
            await store.close()
            throw error
        }
    }

    public func close() async { await store.close() }

    func checkSchema() async throws {
        let exists = try await store.rows("SELECT to_regclass('public.lab_migration') IS NOT NULL")
        guard try exists.first?.decode(Bool.self) == true else { throw LabReadError.notAStore(store: store.display) }
        let applied = try await store.appliedMigrations()
        let known = LabSchema.migrations.map(\.version)
        let unknown = applied.filter { !known.contains($0) }
        if !unknown.isEmpty { throw LabReadError.newerStore(store: store.display, unknown: unknown) }
        let missing = known.filter { !applied.contains($0) }
        if !missing.isEmpty { throw LabReadError.olderStore(store: store.display, missing: missing) }
    }

    /// `stats --by` over every trial of the store, after corrections: the rows
    /// `LogReader.stats(by:)` gives on the merged logs of the same stations.
    public func stats(by grouping: StatsGrouping) async throws -> [StatsRow] {
        var labels: [String: String] = [:]
        if grouping == .sample {
            for row in try await store.rows("SELECT id, label FROM store.sample") {
                let (id, label) = try row.decode((String, String).self)
                labels[id] = label
            }
        }
        var grouper = StatsGrouper(by: grouping, sampleLabels: labels)
        try await scanTrials(samples: grouper.needsSamples) { trial, context in grouper.add(trial, context) }
        return grouper.rows()
    }

    /// Every trial of the store after corrections, as `LogReader.scanTrials` reads them from a
    /// log: the same columns, decoded by the same `TrialRowDecoder`. Streamed, not gathered.
    func scanTrials(
        samples: Bool, _ body: (ScoredTrial, LogReader.TrialContext) throws -> Void
    ) async throws {
        var decoder = TrialRowDecoder(samples: samples)
        do {
            let rows = try await store.connection.query(
                """
                SELECT t.outcome, t.latency_ns, t.layout, t.seen, s.dog_id, d.name, s.id, s.wall_ns, t.id
                FROM store.trial_current t JOIN store.session s ON s.id = t.session_id
                    JOIN store.dog d ON d.id = s.dog_id
                """, logger: store.logger)
            for try await row in rows {
                let (outcome, latency, layout, seen, dogId, dog, sessionId, sessionWall, trialId) = try row.decode(
                    (String, Int64?, String, String?, String, String, String, Int64, String).self)
                var layoutText = layout
                var seenText = seen
                let trial = layoutText.withUTF8 { layoutBytes in
                    if seenText == nil {
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
                guard let trial else { throw LogLimits.badLayout(trial: trialId) }
                try body(
                    trial,
                    LogReader.TrialContext(dogId: dogId, dog: dog, sessionId: sessionId, sessionWallNs: sessionWall))
            }
        } catch {
            throw store.map(error)
        }
    }
}
