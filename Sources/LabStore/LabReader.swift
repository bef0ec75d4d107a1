import Foundation
import PostgresNIO
import SessionLog

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
/// readings of Sources/Readings run on it through its row interface (LabReader+Rows.swift);
/// `export`, not yet one of them, is read here by queries of its own and written by the same
/// code as on a station's log (`RowWriter`, LabReader+Export.swift).
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
}
