import Foundation

/// Fisher's exact test of a 2×2 table, two-sided (R's `fisher.test` default): the sum of the
/// probabilities, under the hypergeometric law with the table's margins fixed, of every table
/// no more probable than the one observed (with R's relative tolerance of 1e-7, so that ties
/// computed a hair apart still count). Exact, from log-factorials; nil for an empty margin.
///
///     successes  failures
///     a          b          (first group)
///     c          d          (second group)
public func fisherExactTest(_ a: Int, _ b: Int, _ c: Int, _ d: Int) -> Double? {
    guard let table = FisherTable(a, b, c, d) else { return nil }
    let observed = table.logP(a)
    var p = 0.0
    for x in table.possible {
        let lp = table.logP(x)
        if lp <= observed + 1e-7 { p += exp(lp) }
    }
    return min(1, p)
}

/// A 2×2 table under the hypergeometric law with its margins fixed: the probability of each
/// first-group count of successes, from log-factorials (both Fisher tests sum these). Nil for
/// an empty margin.
struct FisherTable {
    let row1: Int
    let col1: Int
    let n: Int
    private var logFactorial: [Double]

    init?(_ a: Int, _ b: Int, _ c: Int, _ d: Int) {
        precondition(a >= 0 && b >= 0 && c >= 0 && d >= 0, "a 2×2 table counts no fewer than 0")
        n = a + b + c + d
        row1 = a + b
        col1 = a + c
        guard row1 > 0, c + d > 0, col1 > 0, b + d > 0 else { return nil }
        logFactorial = [0.0]
        logFactorial.reserveCapacity(n + 1)
        for k in stride(from: 1, through: n, by: 1) { logFactorial.append(logFactorial[k - 1] + log(Double(k))) }
    }

    /// The first group's possible counts of successes.
    var possible: ClosedRange<Int> { max(0, col1 - (n - row1))...min(row1, col1) }

    func logP(_ x: Int) -> Double { logChoose(row1, x) + logChoose(n - row1, col1 - x) - logChoose(n, col1) }

    private func logChoose(_ m: Int, _ k: Int) -> Double { logFactorial[m] - logFactorial[k] - logFactorial[m - k] }
}

/// Fisher's exact test of a 2×2 table, one-sided (R's `fisher.test(..., alternative =
/// "greater")`): the probability, under the hypergeometric law with the table's margins fixed,
/// of a first-group count of successes at least `a`. Exact, from log-factorials; nil for an
/// empty margin.
///
///     successes  failures
///     a          b          (first group)
///     c          d          (second group)
public func fisherExactTestGreater(_ a: Int, _ b: Int, _ c: Int, _ d: Int) -> Double? {
    guard let table = FisherTable(a, b, c, d) else { return nil }
    var p = 0.0
    for x in a...table.possible.upperBound { p += exp(table.logP(x)) }
    return min(1, p)
}
