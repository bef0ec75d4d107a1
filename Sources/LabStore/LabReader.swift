import Figures
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
    /// The damaged rows this reading left out (LabReader+Damage.swift).
    public var damage = LabDamage()

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
    ///
    /// Measured (docs/lab.md, the benchmark): sending each trial's dog and session with it, and
    /// making Strings of every column, cost more than the server's scan. So the sessions (few)
    /// are read first into a dictionary keyed by their id's bytes, and each trial's layout and
    /// station views go from the row's bytes straight into the decoder; both reads in one
    /// snapshot, so a trial synced between them cannot lack its session.
    func scanTrials(
        samples: Bool, _ body: (ScoredTrial, TrialContext) throws -> Void
    ) async throws {
        try await store.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        do {
            var sessions: [ByteBuffer: TrialContext] = [:]
            try await store.stream(
                "SELECT s.id, s.dog_id, d.name, s.wall_ns, s.settings FROM store.session s JOIN store.dog d ON d.id = s.dog_id"
            ) { row in
                let (id, dogId, dog, wall, settings) = try row.decode((String, String, String, Int64, String).self)
                sessions[ByteBuffer(string: id)] = TrialContext(
                    dogId: dogId, dog: dog, sessionId: id, sessionWallNs: wall, sessionSettings: settings)
            }
            var decoder = TrialRowDecoder(samples: samples)
            try await store.stream(
                "SELECT t.session_id, t.outcome, t.latency_ns, t.layout, t.seen, t.id FROM store.trial_current t"
            ) { row in
                var cells = row.makeIterator()
                let session = cells.next()?.bytes
                let outcome = try cells.next()?.decode(String.self) ?? ""
                let latency = try cells.next()?.decode(Int64?.self) ?? nil
                let layout = cells.next()?.bytes
                let seen = cells.next()?.bytes
                // A trial whose session the join would not find (none, in a store whose keys hold)
                // is left out, as the log's join leaves it out.
                guard let session, let context = sessions[session] else { return }
                let trial = layout.withBytes { layoutBytes in
                    seen.withBytes { seenBytes in
                        decoder.trial(outcome: outcome, latencyNs: latency, layout: layoutBytes, seen: seenBytes)
                    }
                }
                guard let trial else {
                    leaveOutLayout(trial: (try? cells.next()?.decode(String.self)) ?? "(no id)")
                    return
                }
                try body(trial, context)
            }
            try await store.execute("COMMIT")
        } catch {
            _ = try? await store.execute("ROLLBACK")
            throw error
        }
    }
}

extension Optional where Wrapped == ByteBuffer {
    /// The buffer's readable bytes, nil for SQL NULL, without copying them into a String.
    fileprivate func withBytes<T>(_ body: (UnsafeRawBufferPointer?) -> T) -> T {
        guard let buffer = self else { return body(nil) }
        return buffer.withUnsafeReadableBytes { bytes in
            // An empty text is not NULL: the decoder tells them apart by the address.
            if bytes.baseAddress != nil { return body(bytes) }
            return withUnsafeBytes(of: 0) { body(UnsafeRawBufferPointer(rebasing: $0[0..<0])) }
        }
    }
}
