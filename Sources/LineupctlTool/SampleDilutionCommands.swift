import ArgumentParser
import Foundation
import SessionLog
import StationControl
import TrainingEngine

// Dilutions of a stock sample (issue 38): one with `samples add LABEL --stock ...`, a ladder
// with `samples add-ladder`. Each dilution is a sample of its own (its uses, limits and each
// dog's exposure are its own); the checks are SessionLog's (DilutionCheck), run here before
// anything is sent and again where it is written.

/// How a dilution was made, for `samples add --stock`.
struct DilutionOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Makes the sample a dilution of this stock sample (its label or id); it takes the stock's kind unless --kind says otherwise.",
            valueName: "sample"))
    var stock: String?
    @Option(help: ArgumentHelp("The dilution factor from the stock: 1000 for 1:1000 (above 1).", valueName: "factor"))
    var factor: Double?
    @Option(help: ArgumentHelp("Its concentration (above 0), with --unit.", valueName: "number"))
    var concentration: Double?
    @Option(help: ArgumentHelp("The concentration's unit (ppb, ng/L, ...).", valueName: "unit")) var unit: String?
    @OptionGroup var making: DilutionMakingOptions

    var given: Bool {
        stock != nil || factor != nil || concentration != nil || unit != nil || making.given
    }
}

/// The diluent, the day and the maker, common to one dilution and a ladder.
struct DilutionMakingOptions: ParsableArguments {
    @Option(help: ArgumentHelp("What it was diluted in (mineral oil, water, ...).", valueName: "diluent"))
    var diluent: String?
    @Option(help: ArgumentHelp("The day it was made, YYYY-MM-DD.", valueName: "date")) var madeOn: String?
    @Option(help: ArgumentHelp("Who made it: a pseudonymous code, not a name.", valueName: "code")) var madeBy: String?

    var given: Bool { diluent != nil || madeOn != nil || madeBy != nil }
}

extension Samples {
    /// Adds dilutions of `stock` through lineupd (or the --db file) and says what was added.
    static func addDilutions(
        _ target: AdditionOptions, stock: String, _ rungs: [DilutionRung], kind: SampleKind?,
        making: DilutionMakingOptions, maxUses: Int?, maxUsesPerDog: Int?
    ) throws {
        let made = DilutionMaking(
            kind: kind, diluent: making.diluent, madeOn: making.madeOn, madeBy: making.madeBy, maxUses: maxUses,
            maxUsesPerDog: maxUsesPerDog)
        // Checked here too, so a typo is caught before anything is sent.
        let (rungs, _) = try DilutionCheck.checked(rungs, made)
        let entry = DilutionEntry(
            stock: stock,
            dilutions: rungs.map {
                DilutionEntry.Dilution(
                    label: $0.label, factor: $0.factor, concentration: $0.concentration, unit: $0.unit)
            }, kind: kind, diluent: making.diluent, madeOn: making.madeOn, madeBy: making.madeBy, maxUses: maxUses,
            maxUsesPerDog: maxUsesPerDog)
        let ids = try target.add(
            direct: { try $0.addDilutions(of: stock, rungs, made: made).map { $0.id.uuidString.lowercased() } },
            daemon: { client throws(ControlClientError) in try client.addDilutions(entry) })
        if target.log.json {
            return try printJSON(zip(rungs, ids).map { ["label": $0.label, "id": $1] })
        }
        say(zip(rungs, ids).map { "added dilution \($0.label) of \(stock): \($1)" }.joined(separator: "\n"))
    }

    struct AddLadder: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add-ladder",
            abstract: "Add a ladder of dilutions of a stock sample, each a sample of its own.",
            discussion: """
                Step k is diluted factor^k from the stock and labelled after it: --stock T-1 --factor 10 \
                --steps 3 adds T-1/1e1, T-1/1e2 and T-1/1e3 (1:10, 1:100, 1:1000). A step that is not a \
                power of ten is named by its factor when that is a whole number (T-1/4 for 1:4), else by \
                its decades (T-1/1e1.5 for 1:31.6, a half-log step). All are added or none.

                \(additionNote)
                """)
        @OptionGroup var target: AdditionOptions
        @Option(help: ArgumentHelp("The stock sample (its label or id).", valueName: "sample")) var stock: String
        @Option(
            help: ArgumentHelp("Each step's dilution factor: 10 for tenfold, 3.162 for half-log.", valueName: "factor"))
        var factor: Double
        @Option(help: ArgumentHelp("How many dilutions (1 to \(DilutionCheck.maxSteps)).", valueName: "n")) var steps:
            Int
        @Option(help: "Their kind (default: the stock's).") var kind: SampleKind?
        @OptionGroup var making: DilutionMakingOptions
        @Option(help: ArgumentHelp("At most this many trials in all, for each dilution.", valueName: "n"))
        var maxUses: Int?
        @Option(help: ArgumentHelp("At most this many trials with any one dog, for each dilution.", valueName: "n"))
        var maxUsesPerDog: Int?

        func run() throws {
            try researcherCommand {
                let rungs = try DilutionLadder.rungs(stock: stock, factor: factor, steps: steps)
                try Samples.addDilutions(
                    target, stock: stock, rungs, kind: kind, making: making, maxUses: maxUses,
                    maxUsesPerDog: maxUsesPerDog)
            }
        }
    }
}

/// How a dilution reads: `1:1000 of T-1 in mineral oil (2.5 ppb), made 2026-11-20 by R7`.
func dilutionText(_ d: DilutionSummary) -> String {
    var text = d.factor.map { "1:\(numberText($0)) of \(d.stock)" } ?? "of \(d.stock)"
    if let diluent = d.diluent { text += " in \(diluent)" }
    if let c = d.concentration { text += " (\(numberText(c)) \(d.concentrationUnit ?? ""))" }
    if d.madeOn != nil || d.madeBy != nil {
        text += ", made" + (d.madeOn.map { " \($0)" } ?? "") + (d.madeBy.map { " by \($0)" } ?? "")
    }
    return text
}

/// A factor or concentration as a researcher writes it: `1000`, `31.62`, `1e+08`, `0.0025`.
func numberText(_ value: Double) -> String {
    value == value.rounded() && value < 1e6 ? String(Int64(value)) : String(format: "%.4g", value)
}
