import Foundation
import TrainingEngine

// The request that carries the lab's counts of samples' uses to a station (lineup-sync
// --pull-registry), beside `registry-add` in ControlCalls.swift; and the registry's sample as
// registry-add carries it.

extension StationControlling {
    /// A station without a log of its own (the tests' stand-ins) logs no lab counts.
    public func logLabUses(_ uses: RegistryUses) throws(ControlRefusal) -> RegistryUsesLogged {
        throw ControlRefusal(.failed, "this station takes nothing from the lab's registry")
    }
}

/// `registry-uses`: each sample's uses on the lab's other stations, as the lab store counted
/// them at `asOfWallNs` (the store's clock), for the station's usage limits. Each entry is
/// whole for its sample: a dog of this station left out of `dogs` met it on no other station.
/// An older lineupd answers `unknown-request`, which lineup-sync says in one line.
public struct RegistryUses: StationCall {
    public static let name = "registry-uses"
    public typealias Reply = RegistryUsesLogged
    /// When the store counted them: its wall time, ns since 1970.
    public var asOfWallNs: Int64
    public var samples: [RegistrySampleUses]

    public init(asOfWallNs: Int64, samples: [RegistrySampleUses]) {
        self.asOfWallNs = asOfWallNs
        self.samples = samples
    }

    public func perform(on station: any StationControlling) throws(ControlRefusal) -> RegistryUsesLogged {
        guard asOfWallNs > 0 else { throw ControlRefusal(.badRequest, "registry-uses: asOfWallNs must be above 0") }
        for sample in samples {
            guard sample.uses >= 0, sample.dogs.allSatisfy({ $0.trials >= 0 }) else {
                throw ControlRefusal(.badRequest, "registry-uses: sample \(sample.sample): a count is below 0")
            }
        }
        return try station.logLabUses(self)
    }
}

/// One sample's uses elsewhere: in all (`uses`, as `max_uses` counts), and the trials with
/// each of this station's dogs (by its id here; as `max_uses_per_dog` counts) that met it there.
public struct RegistrySampleUses: Sendable, Codable, Hashable {
    public var sample: String
    public var uses: Int
    public var dogs: [RegistryDogUses]

    public init(sample: String, uses: Int, dogs: [RegistryDogUses] = []) {
        self.sample = sample
        self.uses = uses
        self.dogs = dogs
    }
}

public struct RegistryDogUses: Sendable, Codable, Hashable {
    public var dog: String
    public var trials: Int

    public init(dog: String, trials: Int) {
        self.dog = dog
        self.trials = trials
    }
}

/// `registry-uses`' reply: the counts logged now, and those the log said already.
public struct RegistryUsesLogged: Sendable, Codable, Hashable {
    public var written: Int
    public var unchanged: Int

    public init(written: Int = 0, unchanged: Int = 0) {
        self.written = written
        self.unchanged = unchanged
    }
}

/// A sample of the lab's registry: its lab id, label, kind, research details and limits.
public struct RegistrySample: Sendable, Hashable {
    public var id: String
    public var label: String
    public var kind: SampleKind
    /// Its research facts, sent flat beside the rest.
    public var facts: SampleFacts
    public var maxUses: Int?
    public var maxUsesPerDog: Int?
    /// A dilution (issue 38): the lab id of its stock (sent before it, or on this station
    /// already), its factor and/or concentration with the unit, the diluent, when and by whom
    /// it was made. All nil on a sample that is no dilution, and from an older lineup-sync.
    public var stockId: String? = nil
    public var dilutionFactor: Double? = nil
    public var concentration: Double? = nil
    public var concentrationUnit: String? = nil
    public var diluent: String? = nil
    public var madeOn: String? = nil
    public var madeBy: String? = nil

    public init(
        id: String, label: String, kind: SampleKind, facts: SampleFacts = SampleFacts(), maxUses: Int? = nil,
        maxUsesPerDog: Int? = nil
    ) {
        self.id = id
        self.label = label
        self.kind = kind
        self.facts = facts
        self.maxUses = maxUses
        self.maxUsesPerDog = maxUsesPerDog
    }
}

extension RegistrySample: Codable {
    enum CodingKeys: String, CodingKey {
        case id, label, kind, maxUses, maxUsesPerDog, stockId, dilutionFactor, concentration, concentrationUnit
        case diluent, madeOn, madeBy
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(String.self, forKey: .id)
        label = try c.decode(String.self, forKey: .label)
        kind = try c.decode(SampleKind.self, forKey: .kind)
        facts = try SampleFacts(from: decoder)
        maxUses = try c.decodeIfPresent(Int.self, forKey: .maxUses)
        maxUsesPerDog = try c.decodeIfPresent(Int.self, forKey: .maxUsesPerDog)
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
        try facts.encode(to: encoder)
        try c.encodeIfPresent(maxUses, forKey: .maxUses)
        try c.encodeIfPresent(maxUsesPerDog, forKey: .maxUsesPerDog)
        try c.encodeIfPresent(stockId, forKey: .stockId)
        try c.encodeIfPresent(dilutionFactor, forKey: .dilutionFactor)
        try c.encodeIfPresent(concentration, forKey: .concentration)
        try c.encodeIfPresent(concentrationUnit, forKey: .concentrationUnit)
        try c.encodeIfPresent(diluent, forKey: .diluent)
        try c.encodeIfPresent(madeOn, forKey: .madeOn)
        try c.encodeIfPresent(madeBy, forKey: .madeBy)
    }
}
