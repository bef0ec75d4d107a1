import Figures
import Foundation
import SessionLog
import TrainingEngine

extension ReportHTML {
    // MARK: Familiar and novel samples; figures by sample source (docs/figures.md)

    static func interval(_ p: Proportion) -> String {
        guard let value = p.value, let lower = p.lower, let upper = p.upper else { return "–" }
        return String(
            format: "%.1f\u{00A0}%% (%.1f–%.1f, %d/%d)", value * 100, lower * 100, upper * 100, p.successes, p.trials)
    }

    static func pValue(_ p: Double?) -> String { p.map { String(format: "%.3g", $0) } ?? "–" }

    /// The dog's `stats --familiar-novel` row and its `stats --sources` rows, with their flags.
    static func sampleFigures(_ dog: ReportDog, _ data: ReportData) -> String {
        var html = ""
        if let r = data.familiarNovel[dog.id] {
            var a = DataAttributes()
            addProportion(&a, "familiar-sensitivity", r.familiarSensitivity)
            addProportion(&a, "novel-sensitivity", r.novelSensitivity)
            addProportion(&a, "familiar-specificity", r.familiarSpecificity)
            addProportion(&a, "novel-specificity", r.novelSpecificity)
            a.add("sensitivity-p", r.sensitivityP)
            a.add("specificity-p", r.specificityP)
            a.add("memorisation", r.memorisation ? "yes" : "no")
            html += """
                <h3>Familiar and novel samples</h3>
                <table class="familiar-novel"\(a.text)><thead><tr><th></th><th>familiar</th><th>novel</th>\
                <th>Fisher p</th></tr></thead><tbody>\
                <tr><th>sensitivity</th><td>\(interval(r.familiarSensitivity))</td>\
                <td>\(interval(r.novelSensitivity))</td><td>\(pValue(r.sensitivityP))</td></tr>\
                <tr><th>specificity</th><td>\(interval(r.familiarSpecificity))</td>\
                <td>\(interval(r.novelSpecificity))</td><td>\(pValue(r.specificityP))</td></tr>\
                </tbody></table>
                <p class="note">Novel: a sample the dog met in no earlier trial. Fisher's exact test, two-sided, \
                of familiar against novel (docs/figures.md, "Familiar and novel samples").</p>
                """
            if r.memorisation {
                let drop = ((r.familiarSensitivity.value ?? 0) - (r.novelSensitivity.value ?? 0)) * 100
                html += """
                    <p class="flag memorisation">Flag: novel-sample sensitivity \(percent(r.novelSensitivity)) \
                    is below familiar \(percent(r.familiarSensitivity)) by \(String(format: "%.1f", drop)) points \
                    (p = \(pValue(r.sensitivityP))): the memorisation signature. \(escape(dog.name)) may know \
                    its training samples rather than the scent.</p>
                    """
            }
        }
        let rows = data.confound[dog.id] ?? []
        guard !rows.isEmpty else { return html }
        html += """
            <h3>By sample source, collection and processing</h3>
            <table class="sample-details"><thead><tr><th>detail</th><th>value</th><th>sensitivity</th>\
            <th>specificity</th><th>indicated</th></tr></thead><tbody>
            """
        for r in rows {
            for v in r.values {
                var a = DataAttributes()
                a.add("detail", r.detail.rawValue)
                a.add("value", v.value)
                addProportion(&a, "sensitivity", v.sensitivity)
                addProportion(&a, "specificity", v.specificity)
                addProportion(&a, "indicated", v.indicated)
                html += """
                    <tr\(a.text)><td>\(r.detail.rawValue)</td><td>\(escape(v.value ?? "(not recorded)"))</td>\
                    <td>\(interval(v.sensitivity))</td><td>\(interval(v.specificity))</td>\
                    <td>\(interval(v.indicated))</td></tr>
                    """
            }
        }
        html += "</tbody></table>"
        for r in rows where r.flagged {
            html += """
                <p class="flag confound" data-detail="\(r.detail.rawValue)">Flag: targets and controls differ in \
                \(r.detail.rawValue) (by \(String(format: "%.2f", r.kindDifference ?? 0))) and \
                \(escape(dog.name))'s indications follow the \(r.detail.rawValue) as well as or better than \
                the kind (right \(String(format: "%.1f", (r.accuracyByDetail ?? 0) * 100))\u{00A0}% by \
                \(r.detail.rawValue), \(String(format: "%.1f", (r.accuracyByKind ?? 0) * 100))\u{00A0}% by kind, \
                \(r.presentations) presentations): the dog may have learned where the samples came from \
                (docs/figures.md, "Confound flags").</p>
                """
        }
        return html
    }
}
