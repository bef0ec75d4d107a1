// The registry's values as lineupctl prints them (`lineupctl lab dogs`, `lab samples`): here,
// beside the link that carries them, so lineupctl decodes what the store's registry (LabStore,
// Registry.swift) reads, with no copy of either.

/// A dog in the lab's registry, as `public.lab_dogs` shows it.
public struct LabDog: Sendable, Codable, Equatable {
    public var id: String
    public var name: String
    /// The station the dog was made on (its log's identity).
    public var stationId: String
    public var born: String?
    /// The dog this one is merged into by a merge not undone, and that merge.
    public var mergedInto: String?
    public var mergeId: String?
    /// The dog it counts as now, at the end of its merges (itself when none applies).
    public var countsAs: String
    public var countsAsName: String

    public init(
        id: String, name: String, stationId: String, born: String?, mergedInto: String?, mergeId: String?,
        countsAs: String, countsAsName: String
    ) {
        self.id = id
        self.name = name
        self.stationId = stationId
        self.born = born
        self.mergedInto = mergedInto
        self.mergeId = mergeId
        self.countsAs = countsAs
        self.countsAsName = countsAsName
    }
}

/// A sample in the lab's registry with its uses over every station's trials.
public struct LabSample: Sendable, Codable, Equatable {
    public var id: String
    public var label: String
    public var kind: String
    public var stationId: String
    public var diagnosis: String?
    public var source: String?
    public var collection: String?
    public var processing: String?
    public var collectedOn: String?
    public var maxUses: Int?
    public var maxUsesPerDog: Int?
    public var uses: Int
    /// How many stations the sample has stood in a lineup on.
    public var stationsUsed: Int
    /// A dilution's stock and how it was made (issue 38; store migration v10), nil on any
    /// other sample: the station's `samples add-ladder` fields, pulled with the sample.
    public var stockId: String? = nil
    public var dilutionFactor: Double? = nil
    public var concentration: Double? = nil
    public var concentrationUnit: String? = nil
    public var diluent: String? = nil
    public var madeOn: String? = nil
    public var madeBy: String? = nil

    /// The registry's own fields; a dilution's are set after.
    public init(
        id: String, label: String, kind: String, stationId: String, diagnosis: String?, source: String?,
        collection: String?, processing: String?, collectedOn: String?, maxUses: Int?, maxUsesPerDog: Int?,
        uses: Int, stationsUsed: Int
    ) {
        self.id = id
        self.label = label
        self.kind = kind
        self.stationId = stationId
        self.diagnosis = diagnosis
        self.source = source
        self.collection = collection
        self.processing = processing
        self.collectedOn = collectedOn
        self.maxUses = maxUses
        self.maxUsesPerDog = maxUsesPerDog
        self.uses = uses
        self.stationsUsed = stationsUsed
    }
}
