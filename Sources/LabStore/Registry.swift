import Foundation
import LabLink
import PostgresNIO
import TrainingEngine

/// A sample's uses on the stations other than the asking one, with one dog as the lab counts
/// it (`dog_identity`'s `counts_as`): `uses` as `max_uses` counts them, `trials` as
/// `max_uses_per_dog` does (`public.lab_sample_uses`).
public struct LabSampleUse: Sendable, Codable, Equatable {
    public var sampleId: String
    public var dogCountsAs: String
    public var uses: Int
    public var trials: Int
}

/// Why the registry could not find what it was asked for.
public enum RegistryError: Error, Equatable, CustomStringConvertible {
    case unknownDog(String)
    case ambiguousDog(String, matches: Int)
    case unknownMerge(String)
    case ambiguousMerge(String, matches: Int)
    /// The store was migrated by an older lineup-sync: it lacks the view a pull reads.
    case storeLacks(migration: String)

    public var description: String {
        switch self {
        case .unknownDog(let text):
            "no dog `\(text)` in the lab's registry (give its id or an id prefix, as `lineupctl lab dogs` lists them)"
        case .ambiguousDog(let text, let matches):
            "`\(text)` is the start of \(matches) dogs' ids in the lab's registry: give more of the id"
        case .unknownMerge(let text):
            "no dog merge `\(text)` in the lab's registry (`lineupctl lab dogs` shows each dog's merge)"
        case .ambiguousMerge(let text, let matches):
            "`\(text)` is the start of \(matches) merges' ids: give more of the id"
        case .storeLacks(let migration):
            "the lab store lacks migration \(migration), which counts samples' uses over the lab: "
                + "run `lineup-sync --migrate` as the store's owner"
        }
    }
}

/// The lab's registry of dogs and samples in the store. Dogs are named by id only, never by
/// name: two dogs of one name on two stations are two dogs until a merge says otherwise.
public struct LabRegistry: Sendable {
    public let store: LabStore

    public init(store: LabStore) {
        self.store = store
    }

    public func dogs() async throws -> [LabDog] {
        try await store.rows(
            """
            SELECT id, name, station_id, born, merged_into, merge_id, counts_as, counts_as_name
            FROM public.lab_dogs ORDER BY name, wall_ns, id
            """
        ).map { row in
            let (id, name, station, born, into, merge, counts, countsName) = try row.decode(
                (String, String, String, String?, String?, String?, String, String).self)
            return LabDog(
                id: id, name: name, stationId: station, born: born, mergedInto: into, mergeId: merge,
                countsAs: counts, countsAsName: countsName)
        }
    }

    public func samples() async throws -> [LabSample] {
        // The facts by their columns, as SampleFacts names them: a new fact is read here once the
        // view has its column.
        let facts = SampleFacts.Fact.allCases.map(\.column).joined(separator: ", ")
        return try await store.rows(
            """
            SELECT id, label, kind, station_id, \(unescaped: facts), max_uses, max_uses_per_dog, uses, stations_used,
                stock_id, dilution_factor, concentration, concentration_unit, diluent, made_on, made_by
            FROM public.lab_samples ORDER BY label, wall_ns, id
            """
        ).map { row in
            // By name: twenty columns are past what the row's tuple decode takes.
            let c = row.makeRandomAccess()
            var sample = LabSample(
                id: try c["id"].decode(String.self), label: try c["label"].decode(String.self),
                kind: try c["kind"].decode(String.self), stationId: try c["station_id"].decode(String.self),
                facts: try SampleFacts { try c[$0].decode(String?.self) },
                maxUses: try c["max_uses"].decode(Int?.self),
                maxUsesPerDog: try c["max_uses_per_dog"].decode(Int?.self),
                uses: try c["uses"].decode(Int.self), stationsUsed: try c["stations_used"].decode(Int.self))
            sample.stockId = try c["stock_id"].decode(String?.self)
            sample.dilutionFactor = try c["dilution_factor"].decode(Double?.self)
            sample.concentration = try c["concentration"].decode(Double?.self)
            sample.concentrationUnit = try c["concentration_unit"].decode(String?.self)
            sample.diluent = try c["diluent"].decode(String?.self)
            sample.madeOn = try c["made_on"].decode(String?.self)
            sample.madeBy = try c["made_by"].decode(String?.self)
            return sample
        }
    }

    /// Every sample's uses on the lab's stations other than `station` (a log's identity), by
    /// the dog each trial's dog counts as, and the store's wall time (ns since 1970) taken
    /// before counting: the counts hold at least every trial the store had then.
    public func usesElsewhere(than station: String) async throws -> (asOfWallNs: Int64, uses: [LabSampleUse]) {
        // to_regclass needs no privilege on the view, so any login learns it is missing.
        let present = try await store.rows("SELECT to_regclass('public.lab_sample_uses') IS NOT NULL").first?
            .decode(Bool.self)
        guard present == true else { throw RegistryError.storeLacks(migration: "v5-sample-uses-by-station-and-dog") }
        let asOf =
            try await store.rows(
                "SELECT (extract(epoch FROM clock_timestamp()) * 1000000000)::bigint"
            ).map { try $0.decode(Int64.self) }.first ?? 0
        let uses = try await store.rows(
            """
            SELECT sample_id, dog_counts_as, sum(uses)::bigint, sum(trials)::bigint FROM public.lab_sample_uses
            WHERE station_id <> \(station) GROUP BY sample_id, dog_counts_as ORDER BY sample_id, dog_counts_as
            """
        ).map { row in
            let (sample, dog, uses, trials) = try row.decode((String, String, Int, Int).self)
            return LabSampleUse(sampleId: sample, dogCountsAs: dog, uses: uses, trials: trials)
        }
        return (asOf, uses)
    }

    /// A dog's full id from its id or a unique prefix of it.
    public func resolveDog(_ text: String) async throws -> String {
        let matches = try await idsStarting(with: text, in: "public.lab_dogs")
        guard !matches.isEmpty else { throw RegistryError.unknownDog(text) }
        guard matches.count == 1 else { throw RegistryError.ambiguousDog(text, matches: matches.count) }
        return matches[0]
    }

    /// A merge's full id from its id or a unique prefix of it.
    public func resolveMerge(_ text: String) async throws -> String {
        let matches = try await idsStarting(with: text, in: "public.dog_merges")
        guard !matches.isEmpty else { throw RegistryError.unknownMerge(text) }
        guard matches.count == 1 else { throw RegistryError.ambiguousMerge(text, matches: matches.count) }
        return matches[0]
    }

    /// Ids are lowercase UUIDs: text of anything but hex digits and dashes matches nothing.
    func idsStarting(with text: String, in view: String) async throws -> [String] {
        let prefix = text.lowercased()
        guard !prefix.isEmpty, prefix.allSatisfy({ $0.isHexDigit || $0 == "-" }) else { return [] }
        return try await store.rows(
            "SELECT id FROM \(unescaped: view) WHERE starts_with(id, \(prefix)) ORDER BY id LIMIT 10"
        ).map { try $0.decode(String.self) }
    }

    /// Records that `merged` is the same dog as `keep`; returns the merge's id. The store's
    /// trigger refuses a dog merged into itself, a dog merged already, and a cycle.
    public func mergeDogs(keep: String, merged: String, why: String) async throws -> String {
        let kept = try await resolveDog(keep)
        let merged = try await resolveDog(merged)
        let id = UUID().uuidString.lowercased()
        // Who and when are the server's, set by the trigger; the placeholders are overwritten.
        try await store.execute(
            """
            INSERT INTO store.dog_merge (id, kept_dog_id, merged_dog_id, recorded_by, why, wall_ns)
            VALUES (\(id), \(kept), \(merged), '', \(why), 0)
            """)
        return id
    }

    /// Records that a merge no longer applies; returns the undoing's id.
    public func undoMerge(_ merge: String, why: String) async throws -> String {
        let mergeId = try await resolveMerge(merge)
        let id = UUID().uuidString.lowercased()
        try await store.execute(
            """
            INSERT INTO store.dog_merge_undone (id, merge_id, recorded_by, why, wall_ns)
            VALUES (\(id), \(mergeId), '', \(why), 0)
            """)
        return id
    }
}
