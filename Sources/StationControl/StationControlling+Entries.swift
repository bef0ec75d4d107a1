import TrainingEngine

// The researcher's additions as lineupd takes them over the socket (a dog, a sample, notes,
// a correction): one Codable type each, beside the station's answers in StationControlling.swift.

/// `dog-add`: a dog for the log. Checked again by lineupd: a name, a `YYYY-MM-DD` birth date.
public struct DogEntry: Sendable, Codable, Hashable {
    public var name: String
    public var born: String?
    public var notes: String?

    public init(name: String, born: String? = nil, notes: String? = nil) {
        self.name = name
        self.born = born
        self.notes = notes
    }
}

/// `sample-add`: a scent sample and its research details.
public struct SampleEntry: Sendable, Hashable {
    /// The unique id written on the sample.
    public var label: String
    public var kind: SampleKind
    /// Its research facts, sent flat beside the label and kind (`"processing"`, not nested).
    public var facts: SampleFacts
    /// Usage limits, overall and per dog (nil: none of its own).
    public var maxUses: Int? = nil
    public var maxUsesPerDog: Int? = nil

    public init(label: String, kind: SampleKind, facts: SampleFacts = SampleFacts()) {
        self.label = label
        self.kind = kind
        self.facts = facts
    }
}

extension SampleEntry: Codable {
    enum CodingKeys: String, CodingKey { case label, kind, maxUses, maxUsesPerDog }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        label = try c.decode(String.self, forKey: .label)
        kind = try c.decode(SampleKind.self, forKey: .kind)
        facts = try SampleFacts(from: decoder)
        maxUses = try c.decodeIfPresent(Int.self, forKey: .maxUses)
        maxUsesPerDog = try c.decodeIfPresent(Int.self, forKey: .maxUsesPerDog)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(label, forKey: .label)
        try c.encode(kind, forKey: .kind)
        try facts.encode(to: encoder)
        try c.encodeIfPresent(maxUses, forKey: .maxUses)
        try c.encodeIfPresent(maxUsesPerDog, forKey: .maxUsesPerDog)
    }
}

/// `sample-note`: a note on a sample named by label or id; notes are appended, never edited.
public struct SampleNoteEntry: Sendable, Codable, Hashable {
    public var sample: String
    public var text: String

    public init(sample: String, text: String) {
        self.sample = sample
        self.text = text
    }
}

/// `dog-note`: a dog (name, id or id prefix) and its notes as they stand from now on.
public struct DogNoteEntry: Sendable, Codable, Hashable {
    public var dog: String
    public var text: String

    public init(dog: String, text: String) {
        self.dog = dog
        self.text = text
    }
}

/// `trial-correct`: the trial (id or unique prefix), its outcome as it should stand, the
/// station indicated (1-based; nil for none) and why.
public struct TrialCorrectionEntry: Sendable, Codable, Hashable {
    public var trial: String
    public var outcome: TrialOutcome
    public var indicated: Int?
    public var reason: String

    public init(trial: String, outcome: TrialOutcome, indicated: Int? = nil, reason: String) {
        self.trial = trial
        self.outcome = outcome
        self.indicated = indicated
        self.reason = reason
    }
}

/// `session-note`: a comment on a session (id or unique prefix), appended after it; notes
/// are never edited, a later one adds to the record.
public struct SessionNoteEntry: Sendable, Codable, Hashable {
    public var session: String
    public var text: String

    public init(session: String, text: String) {
        self.session = session
        self.text = text
    }
}
