// Nelder–Mead's simplex minimiser (Lagarias et al. 1998's coefficients: reflect 1, expand 2,
// contract ½, shrink ½), deterministic: the fit's parameters are mapped onto unbounded ones
// by the caller, so no constraint handling here.

struct NelderMead {
    var tolerance = 1e-10
    var maxEvaluations = 4000

    /// The minimum found from `start`, with initial steps `steps` per coordinate.
    func minimise(_ f: ([Double]) -> Double, start: [Double], steps: [Double]) -> (point: [Double], value: Double) {
        let d = start.count
        var simplex = [start]
        for i in 0..<d {
            var p = start
            p[i] += steps[i]
            simplex.append(p)
        }
        var values = simplex.map(f)
        var evaluations = values.count
        func centroid(excluding worst: Int) -> [Double] {
            var c = [Double](repeating: 0, count: d)
            for (j, p) in simplex.enumerated() where j != worst {
                for i in 0..<d { c[i] += p[i] }
            }
            return c.map { $0 / Double(d) }
        }
        func along(_ c: [Double], _ p: [Double], _ t: Double) -> [Double] {
            (0..<d).map { c[$0] + t * (p[$0] - c[$0]) }
        }
        while evaluations < maxEvaluations {
            // Order best first (stable, so ties keep their places).
            let order = values.indices.sorted { values[$0] < values[$1] || (values[$0] == values[$1] && $0 < $1) }
            simplex = order.map { simplex[$0] }
            values = order.map { values[$0] }
            let spread = values[d] - values[0]
            var size = 0.0
            for p in simplex.dropFirst() {
                for i in 0..<d { size = max(size, abs(p[i] - simplex[0][i])) }
            }
            if spread <= tolerance * (1 + abs(values[0])) && size <= 1e-9 { break }
            let c = centroid(excluding: d)
            let reflected = along(c, simplex[d], -1)
            let fr = f(reflected)
            evaluations += 1
            if fr < values[0] {
                let expanded = along(c, simplex[d], -2)
                let fe = f(expanded)
                evaluations += 1
                if fe < fr {
                    (simplex[d], values[d]) = (expanded, fe)
                } else {
                    (simplex[d], values[d]) = (reflected, fr)
                }
            } else if fr < values[d - 1] {
                (simplex[d], values[d]) = (reflected, fr)
            } else {
                let outside = fr < values[d]
                let contracted = along(c, outside ? reflected : simplex[d], 0.5)
                let fc = f(contracted)
                evaluations += 1
                if fc < (outside ? fr : values[d]) {
                    (simplex[d], values[d]) = (contracted, fc)
                } else {
                    for j in 1...d {
                        simplex[j] = along(simplex[0], simplex[j], 0.5)
                        values[j] = f(simplex[j])
                    }
                    evaluations += d
                }
            }
        }
        let best = values.indices.min { values[$0] < values[$1] || (values[$0] == values[$1] && $0 < $1) }!
        return (simplex[best], values[best])
    }
}
