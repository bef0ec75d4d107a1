import Figures
import Foundation
import SessionLog
import TrainingEngine

// `stats --familiar-novel` and `stats --sources`: the samples' side of the figures
// (docs/figures.md, "Familiar and novel samples" and "Confound flags").

func describeP(_ p: Double?) -> String { p.map { String(format: "%.3g", $0) } ?? "-" }

func describePoints(_ p: Proportion) -> String {
    guard let value = p.value else { return "-" }
    return String(format: "%.1f %% (%d/%d)", value * 100, p.successes, p.trials)
}

/// The line `stats` prints for a dog the memorisation rule flags.
func memorisationFlagLine(_ r: FamiliarNovelRow) -> String {
    let drop = ((r.familiarSensitivity.value ?? 0) - (r.novelSensitivity.value ?? 0)) * 100
    return "flag: \(r.dog): novel-sample sensitivity \(describePoints(r.novelSensitivity)) is below its "
        + "familiar-sample sensitivity \(describePoints(r.familiarSensitivity)) by "
        + String(format: "%.1f", drop) + " points (Fisher's exact test, two-sided, p = \(describeP(r.sensitivityP))): "
        + "the memorisation signature, the dog may know its training samples rather than the scent"
}

/// The line `stats` prints for a dog and detail the confound rule flags.
func confoundFlagLine(_ r: ConfoundRow) -> String {
    "flag: \(r.dog): targets and controls differ in \(r.detail.rawValue) (by "
        + describeNumber(r.kindDifference) + ") and the dog's indications follow the \(r.detail.rawValue) "
        + "as well as or better than the kind (predicted right "
        + describeNumber(r.accuracyByDetail.map { $0 * 100 }, "%.1f %%") + " by \(r.detail.rawValue), "
        + describeNumber(r.accuracyByKind.map { $0 * 100 }, "%.1f %%") + " by kind, λ "
        + describeNumber(r.lambdaByDetail) + ", \(r.presentations) presentations): "
        + "it may have learned where the samples came from, not the scent"
}

extension Stats {
    /// `rows`: `FamiliarNovelReading`'s, on a log or the lab store.
    func printFamiliarNovel(_ rows: [FamiliarNovelRow]) throws {
        if log.json { return try printJSON(rows) }
        say("Trials of \(describeSelection(self.rows, selection)); novel: a sample the dog met in no earlier trial")
        printTable(
            [
                "DOG", "FAMILIAR SENSITIVITY", "NOVEL SENSITIVITY", "P", "FAMILIAR SPECIFICITY", "NOVEL SPECIFICITY",
                "P",
            ],
            rows.map { r in
                [
                    r.dog, describe(r.familiarSensitivity), describe(r.novelSensitivity), describeP(r.sensitivityP),
                    describe(r.familiarSpecificity), describe(r.novelSpecificity), describeP(r.specificityP),
                ]
            })
        say(
            "\nP: Fisher's exact test, two-sided, of familiar against novel (docs/figures.md, \"Familiar and novel samples\")"
        )
        for r in rows where r.memorisation { say(memorisationFlagLine(r)) }
    }

    func printSources(_ rows: [ConfoundRow]) throws {
        if log.json { return try printJSON(rows) }
        say("Trials of \(describeSelection(self.rows, selection))")
        if rows.isEmpty {
            say(
                "No sample in these trials has a source, collection or processing in the registry (samples add --source)."
            )
            return
        }
        printTable(
            ["DOG", "DETAIL", "VALUE", "SENSITIVITY", "SPECIFICITY", "INDICATED"],
            rows.flatMap { r in
                r.values.map { v in
                    [
                        r.dog, r.detail.rawValue, v.value ?? "(not recorded)", describe(v.sensitivity),
                        describe(v.specificity), describe(v.indicated),
                    ]
                }
            })
        say("")
        printTable(
            [
                "DOG", "DETAIL", "PRESENTATIONS", "KINDS DIFFER BY", "RIGHT BY KIND", "RIGHT BY DETAIL", "LAMBDA",
                "FLAG",
            ],
            rows.map { r in
                [
                    r.dog, r.detail.rawValue, "\(r.presentations)", describeNumber(r.kindDifference),
                    describeNumber(r.accuracyByKind.map { $0 * 100 }, "%.1f %%"),
                    describeNumber(r.accuracyByDetail.map { $0 * 100 }, "%.1f %%"), describeNumber(r.lambdaByDetail),
                    r.flagged ? "yes" : "no",
                ]
            })
        say("\nCounted per target presentation and examined control (docs/figures.md, \"Confound flags\")")
        for r in rows where r.flagged { say(confoundFlagLine(r)) }
    }
}
