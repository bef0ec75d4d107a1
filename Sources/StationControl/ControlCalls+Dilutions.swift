import TrainingEngine

/// `dilution-add`: dilutions of a stock sample (issue 38), one or a ladder, written all or
/// none. A request of its own rather than fields added to `sample-add`, so that an older
/// lineupd answers `unknown-request` instead of adding plain samples without their dilution.
public struct DilutionEntry: StationCall {
    public static let name = "dilution-add"
    public typealias Reply = DilutionsAdded
    /// The stock's label, id or id prefix.
    public var stock: String
    public var dilutions: [Dilution]
    /// nil: the stock's kind.
    public var kind: SampleKind?
    public var diluent: String?
    /// `YYYY-MM-DD`.
    public var madeOn: String?
    /// A pseudonymous code.
    public var madeBy: String?
    public var maxUses: Int?
    public var maxUsesPerDog: Int?

    /// One dilution: its label, its factor from the stock (1000 for 1:1000) and/or its
    /// concentration with the unit.
    public struct Dilution: Sendable, Codable, Hashable {
        public var label: String
        public var factor: Double?
        public var concentration: Double?
        public var unit: String?

        public init(label: String, factor: Double? = nil, concentration: Double? = nil, unit: String? = nil) {
            self.label = label
            self.factor = factor
            self.concentration = concentration
            self.unit = unit
        }
    }

    public init(
        stock: String, dilutions: [Dilution], kind: SampleKind? = nil, diluent: String? = nil, madeOn: String? = nil,
        madeBy: String? = nil, maxUses: Int? = nil, maxUsesPerDog: Int? = nil
    ) {
        self.stock = stock
        self.dilutions = dilutions
        self.kind = kind
        self.diluent = diluent
        self.madeOn = madeOn
        self.madeBy = madeBy
        self.maxUses = maxUses
        self.maxUsesPerDog = maxUsesPerDog
    }

    public func perform(on station: any StationControlling) throws(ControlRefusal) -> DilutionsAdded {
        try station.addDilutions(self)
    }
}

/// `dilution-add`'s reply: the new samples' ids, in the order of the request's dilutions.
public struct DilutionsAdded: Sendable, Codable, Hashable {
    public var ids: [String]

    public init(ids: [String]) { self.ids = ids }
}

extension StationControlling {
    /// A station without a log of its own (the tests' stand-ins) adds no dilutions.
    public func addDilutions(_ entry: DilutionEntry) throws(ControlRefusal) -> DilutionsAdded {
        throw ControlRefusal(.failed, "this station adds no dilutions")
    }
}
