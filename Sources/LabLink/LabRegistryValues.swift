import TrainingEngine

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
public struct LabSample: Sendable, Equatable {
    public var id: String
    public var label: String
    public var kind: String
    public var stationId: String
    /// Its research facts, encoded flat beside the rest.
    public var facts: SampleFacts
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
        id: String, label: String, kind: String, stationId: String, facts: SampleFacts, maxUses: Int?,
        maxUsesPerDog: Int?, uses: Int, stationsUsed: Int
    ) {
        self.id = id
        self.label = label
        self.kind = kind
        self.stationId = stationId
        self.facts = facts
        self.maxUses = maxUses
        self.maxUsesPerDog = maxUsesPerDog
        self.uses = uses
        self.stationsUsed = stationsUsed
    }
}

extension LabSample: Codable {
    enum CodingKeys: String, CodingKey {
        case id, label, kind, stationId, maxUses, maxUsesPerDog, uses, stationsUsed, stockId, dilutionFactor
        case concentration, concentrationUnit, diluent, madeOn, madeBy
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(String.self, forKey: .id)
        label = try c.decode(String.self, forKey: .label)
        kind = try c.decode(String.self, forKey: .kind)
        stationId = try c.decode(String.self, forKey: .stationId)
        facts = try SampleFacts(from: decoder)
        maxUses = try c.decodeIfPresent(Int.self, forKey: .maxUses)
        maxUsesPerDog = try c.decodeIfPresent(Int.self, forKey: .maxUsesPerDog)
        uses = try c.decode(Int.self, forKey: .uses)
        stationsUsed = try c.decode(Int.self, forKey: .stationsUsed)
        stockId = try c.decodeIfPresent(String.self, forKey: .stockId)
        dilutionFactor = try c.decodeIfPresent(Double.self, forKey: .dilutionFactor)
        concentration = try c.decodeIfPresent(Double.self, forKey: .concentration)
        concentrationUnit = try c.decodeIfPresent(String.self, forKey: .concentrationUnit)
        diluent = try c.decodeIfPresent(String.self, forKey: .diluent)
        madeOn = try c.decodeIfPresent(String.self, forKey: .madeOn)
        madeBy = try c.decodeIfPresent(String.self, forKey: .madeBy)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(label, forKey: .label)
        try c.encode(kind, forKey: .kind)
        try c.encode(stationId, forKey: .stationId)
        try facts.encode(to: encoder)
        try c.encodeIfPresent(maxUses, forKey: .maxUses)
        try c.encodeIfPresent(maxUsesPerDog, forKey: .maxUsesPerDog)
        try c.encode(uses, forKey: .uses)
        try c.encode(stationsUsed, forKey: .stationsUsed)
        try c.encodeIfPresent(stockId, forKey: .stockId)
        try c.encodeIfPresent(dilutionFactor, forKey: .dilutionFactor)
        try c.encodeIfPresent(concentration, forKey: .concentration)
        try c.encodeIfPresent(concentrationUnit, forKey: .concentrationUnit)
        try c.encodeIfPresent(diluent, forKey: .diluent)
        try c.encodeIfPresent(madeOn, forKey: .madeOn)
        try c.encodeIfPresent(madeBy, forKey: .madeBy)
    }
}
