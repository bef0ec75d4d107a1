// A sample's research facts, declared once (issue 34, "one vocabulary per fact"): every type
// that carries a sample (the log's record and listing, the socket's entries, the lab's
// registry, the figures' grouping, the page) embeds this value instead of its own copy of the
// fields. Pure: no I/O; the one check of the facts (the collection date) is
// `SampleFacts.checked()` in SessionLog, beside the date rule it uses.

/// What the researcher records of a physical sample beside its label and kind: its diagnosis,
/// where it came from, how it was collected and processed, and when it was collected.
///
/// Encoded flat: the holder's encoder gets these keys beside its own (`"processing"`, not
/// `"facts": {…}`), so every wire format, export and JSON output reads as it did when each type
/// declared the fields itself. A holder with its own `Codable` calls ``encode(to:)`` and
/// ``init(from:)`` with its own encoder and decoder.
public struct SampleFacts: Sendable, Hashable, Codable {
    public var diagnosis: String?
    /// Where it came from (clinic, donor group).
    public var source: String?
    /// How it was collected.
    public var collection: String?
    /// How it was processed and stored.
    public var processing: String?
    /// Collection date as `YYYY-MM-DD`.
    public var collectedOn: String?

    public init(
        diagnosis: String? = nil, source: String? = nil, collection: String? = nil, processing: String? = nil,
        collectedOn: String? = nil
    ) {
        self.diagnosis = diagnosis
        self.source = source
        self.collection = collection
        self.processing = processing
        self.collectedOn = collectedOn
    }

    /// Each fact by name, in the order the registry lists them. Its raw value is the JSON key;
    /// ``column`` the log's and the lab store's column, ``option`` lineupctl's.
    public enum Fact: String, CodingKey, CaseIterable, Sendable {
        case diagnosis, source, collection, processing, collectedOn

        /// The column in the log's and the lab store's `sample` table.
        public var column: String { self == .collectedOn ? "collected_on" : rawValue }
        /// lineupctl's option for it (`samples add --collected-on`).
        public var option: String { self == .collectedOn ? "--collected-on" : "--" + rawValue }
    }

    typealias CodingKeys = Fact

    /// A fact by name.
    public subscript(fact: Fact) -> String? {
        get {
            switch fact {
            case .diagnosis: diagnosis
            case .source: source
            case .collection: collection
            case .processing: processing
            case .collectedOn: collectedOn
            }
        }
        set {
            switch fact {
            case .diagnosis: diagnosis = newValue
            case .source: source = newValue
            case .collection: collection = newValue
            case .processing: processing = newValue
            case .collectedOn: collectedOn = newValue
            }
        }
    }

    /// The facts given, in the registry's order.
    public var given: [(fact: Fact, value: String)] {
        Fact.allCases.compactMap { fact in self[fact].map { (fact, $0) } }
    }

    /// The facts by their columns, in the registry's order (nil where not recorded): what a
    /// store writes.
    public var columns: [(column: String, value: String?)] { Fact.allCases.map { ($0.column, self[$0]) } }

    /// The facts read by column name from a row of either store's `sample` table.
    public init(column value: (String) throws -> String?) rethrows {
        self.init()
        for fact in Fact.allCases { self[fact] = try value(fact.column) }
    }
}
