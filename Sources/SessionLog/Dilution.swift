import Foundation
import GRDB
import TrainingEngine

// Dilutions of a stock (issue 38): each is a sample of its own, with what it was made from and
// how. The checks live here, once: lineupctl runs them before it sends anything, and the log
// runs them again inside the transaction that writes, whoever asked (lineupctl --db, lineupd).

/// What makes a sample a dilution of another: the sample it was made from, by how much it was
/// diluted (`factor`: 1000 is 1:1000, one part of stock in 1000 parts) and/or the concentration
/// it holds, the diluent, the day it was made and who made it (a pseudonymous code).
public struct SampleDilution: Sendable, Hashable, Codable {
    public var stockId: UUID
    public var factor: Double?
    public var concentration: Double?
    public var concentrationUnit: String?
    public var diluent: String?
    /// `YYYY-MM-DD`.
    public var madeOn: String?
    public var madeBy: String?

    public init(
        stockId: UUID, factor: Double? = nil, concentration: Double? = nil, concentrationUnit: String? = nil,
        diluent: String? = nil, madeOn: String? = nil, madeBy: String? = nil
    ) {
        self.stockId = stockId
        self.factor = factor
        self.concentration = concentration
        self.concentrationUnit = concentrationUnit
        self.diluent = diluent
        self.madeOn = madeOn
        self.madeBy = madeBy
    }
}

/// One dilution to add: its label and how strong it is (a factor, a concentration, or both).
public struct DilutionRung: Sendable, Hashable, Codable {
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

/// How a set of dilutions was made, the same for each: the kind (nil: the stock's), the
/// diluent, the day, who made them, and each one's usage limits.
public struct DilutionMaking: Sendable, Hashable, Codable {
    public var kind: SampleKind?
    public var diluent: String?
    public var madeOn: String?
    public var madeBy: String?
    public var maxUses: Int?
    public var maxUsesPerDog: Int?

    public init(
        kind: SampleKind? = nil, diluent: String? = nil, madeOn: String? = nil, madeBy: String? = nil,
        maxUses: Int? = nil, maxUsesPerDog: Int? = nil
    ) {
        self.kind = kind
        self.diluent = diluent
        self.madeOn = madeOn
        self.madeBy = madeBy
        self.maxUses = maxUses
        self.maxUsesPerDog = maxUsesPerDog
    }
}

/// The rules for dilutions, each refusal naming the option and the value at fault.
public enum DilutionCheck {
    /// The most steps a ladder may have (Turunen 2024 went to 1:10²³).
    public static let maxSteps = 30

    /// Checks the rungs and how they were made; returns them trimmed (labels, unit, diluent,
    /// maker; an empty text is none) with the day normalised.
    public static func checked(_ rungs: [DilutionRung], _ made: DilutionMaking) throws -> (
        [DilutionRung], DilutionMaking
    ) {
        guard !rungs.isEmpty else { throw SessionLogError.invalidInput("no dilution to add") }
        var made = made
        made.diluent = trimmed(made.diluent)
        made.madeBy = trimmed(made.madeBy)
        made.madeOn = try trimmed(made.madeOn).map { try ResearcherDate.validateDay($0) }
        if let maker = made.madeBy, !SessionLog.isPseudonymousCode(maker) {
            throw SessionLogError.invalidInput(
                "--made-by \"\(maker)\": who made it is a pseudonymous code (letters, digits, - _ ., at most 32), not a name"
            )
        }
        for (name, limit) in [("--max-uses", made.maxUses), ("--max-uses-per-dog", made.maxUsesPerDog)] {
            if let limit, limit < 1 {
                throw SessionLogError.invalidInput(
                    "\(name) \(limit): a usage limit is at least 1 (leave it out for none)")
            }
        }
        var labels = Set<String>()
        let rungs = try rungs.map { rung in
            var rung = rung
            rung.label = rung.label.trimmingCharacters(in: .whitespacesAndNewlines)
            rung.unit = trimmed(rung.unit)
            guard !rung.label.isEmpty else { throw SessionLogError.invalidInput("a dilution needs a label") }
            guard labels.insert(rung.label).inserted else { throw SessionLogError.duplicateSample(label: rung.label) }
            let named = "dilution \(rung.label)"
            if let factor = rung.factor, !(factor > 1 && factor.isFinite) {
                throw SessionLogError.invalidInput(
                    "\(named): --factor \(text(factor)): a dilution factor is above 1 (one part of stock in 1000 parts is --factor 1000)"
                )
            }
            if let concentration = rung.concentration {
                guard concentration > 0, concentration.isFinite else {
                    throw SessionLogError.invalidInput(
                        "\(named): --concentration \(text(concentration)): a concentration is above 0")
                }
                guard rung.unit != nil else {
                    throw SessionLogError.invalidInput(
                        "\(named): --concentration \(text(concentration)) needs its --unit (e.g. ppb, ng/L)")
                }
            } else if let unit = rung.unit {
                throw SessionLogError.invalidInput("\(named): --unit \(unit) without the --concentration it is of")
            }
            guard rung.factor != nil || rung.concentration != nil else {
                throw SessionLogError.invalidInput("\(named): give its --factor or its --concentration (or both)")
            }
            return rung
        }
        return (rungs, made)
    }

    static func trimmed(_ text: String?) -> String? {
        text.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.flatMap { $0.isEmpty ? nil : $0 }
    }

    static func text(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : "\(value)"
    }
}

/// A ladder of dilutions of one stock, each `factor` times weaker than the one before: step k
/// is diluted `factor`^k from the stock (every factor is the whole dilution from the stock).
public enum DilutionLadder {
    public static func rungs(stock: String, factor: Double, steps: Int) throws -> [DilutionRung] {
        guard factor > 1, factor.isFinite else {
            throw SessionLogError.invalidInput(
                "--factor \(DilutionCheck.text(factor)): a ladder's step is a dilution factor above 1 (10 for tenfold steps, 3.162 for half-log)"
            )
        }
        guard (1...DilutionCheck.maxSteps).contains(steps) else {
            throw SessionLogError.invalidInput("--steps \(steps): a ladder has 1 to \(DilutionCheck.maxSteps) steps")
        }
        let stock = stock.trimmingCharacters(in: .whitespacesAndNewlines)
        return (1...steps).map { step in
            let total = pow(factor, Double(step))
            return DilutionRung(label: "\(stock)/\(name(total))", factor: total)
        }
    }

    /// A rung's name after its stock's label: `1e3` for 1:1000 (a power of ten), the factor
    /// itself when it is a whole number below a million (`4` for 1:4), else `1e` and its
    /// base-10 logarithm to two decimals (`1e1.5` for 1:31.6, a half-log step).
    public static func name(_ total: Double) -> String {
        let decades = (log10(total) * 100).rounded() / 100
        if decades == decades.rounded() { return "1e\(Int(decades))" }
        if total == total.rounded(), total < 1e6 { return String(Int(total)) }
        var text = String(format: "%.2f", decades)
        while text.hasSuffix("0") { text.removeLast() }
        return "1e\(text)"
    }
}

extension SessionLog {
    /// Adds dilutions of `stock` (its label, id or id prefix), all or none in one transaction:
    /// refused with nothing written if the stock is unknown, a label is taken, or a rung fails
    /// ``DilutionCheck``. A dilution takes its stock's kind unless `made.kind` says otherwise.
    public func addDilutions(of stock: String, _ rungs: [DilutionRung], made: DilutionMaking) throws
        -> [SampleRecord]
    {
        let (rungs, made) = try DilutionCheck.checked(rungs, made)
        var added: [SampleRecord] = []
        try writeChecked { db in
            let stockText = stock.trimmingCharacters(in: .whitespacesAndNewlines)
            let byLabel = try String.fetchOne(
                db, sql: "SELECT id FROM sample WHERE label = ?", arguments: [stockText])
            guard
                let id = try byLabel ?? LogReader.resolve(db, table: "sample", text: stockText, kind: "sample"),
                let stockId = UUID(uuidString: id),
                let stockKind = try String.fetchOne(db, sql: "SELECT kind FROM sample WHERE id = ?", arguments: [id])
                    .flatMap(SampleKind.init(rawValue:))
            else { throw SessionLogError.unknownSample(stockText) }
            for rung in rungs {
                if try String.fetchOne(db, sql: "SELECT id FROM sample WHERE label = ?", arguments: [rung.label]) != nil
                {
                    throw SessionLogError.duplicateSample(label: rung.label)
                }
                var sample = SampleRecord(
                    label: rung.label, kind: made.kind ?? stockKind, maxUses: made.maxUses,
                    maxUsesPerDog: made.maxUsesPerDog)
                sample.dilution = SampleDilution(
                    stockId: stockId, factor: rung.factor, concentration: rung.concentration,
                    concentrationUnit: rung.unit, diluent: made.diluent, madeOn: made.madeOn, madeBy: made.madeBy)
                try sample.append(to: db)
                added.append(sample)
            }
        }
        return added
    }

    /// A handler's or a maker's code: letters, digits, `-`, `_`, `.`, at most 32, so that no
    /// person's name is written into the log.
    public static func isPseudonymousCode(_ code: String) -> Bool {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.")
        return !code.isEmpty && code.count <= 32 && code.allSatisfy { allowed.contains($0) }
    }
}
