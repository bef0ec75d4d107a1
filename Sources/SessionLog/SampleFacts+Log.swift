import GRDB
import TrainingEngine

// The log's side of a sample's facts (TrainingEngine's SampleFacts): their one check, and the
// listing's flat JSON.

extension SampleFacts {
    /// The one check of a sample's facts, whoever adds the sample (lineupctl before it sends,
    /// the log as it writes, lineupd taking the lab's registry): the collection date is a
    /// calendar day (`YYYY-MM-DD`); the other facts are the researcher's free text.
    public func checked() throws -> SampleFacts {
        var facts = self
        facts.collectedOn = try collectedOn.map { try ResearcherDate.validateDay($0) }
        return facts
    }

    /// The facts of a row of the log's `sample` table, by their columns.
    init(_ row: Row) { self.init { row[$0] } }
}

// A listed sample encodes its facts flat, beside its own keys, as it did when it declared them.
extension SampleSummary {
    enum CodingKeys: String, CodingKey {
        case id, label, kind, added, uses, notes, maxUses, maxUsesPerDog, dilution
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(String.self, forKey: .id)
        label = try c.decode(String.self, forKey: .label)
        kind = try c.decode(SampleKind.self, forKey: .kind)
        facts = try SampleFacts(from: decoder)
        added = try c.decode(String.self, forKey: .added)
        uses = try c.decode(Int.self, forKey: .uses)
        notes = try c.decode(Int.self, forKey: .notes)
        maxUses = try c.decodeIfPresent(Int.self, forKey: .maxUses)
        maxUsesPerDog = try c.decodeIfPresent(Int.self, forKey: .maxUsesPerDog)
        dilution = try c.decodeIfPresent(DilutionSummary.self, forKey: .dilution)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(label, forKey: .label)
        try c.encode(kind, forKey: .kind)
        try facts.encode(to: encoder)
        try c.encode(added, forKey: .added)
        try c.encode(uses, forKey: .uses)
        try c.encode(notes, forKey: .notes)
        try c.encodeIfPresent(maxUses, forKey: .maxUses)
        try c.encodeIfPresent(maxUsesPerDog, forKey: .maxUsesPerDog)
        try c.encodeIfPresent(dilution, forKey: .dilution)
    }
}
