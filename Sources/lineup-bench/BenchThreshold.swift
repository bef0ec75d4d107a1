import ArgumentParser
import Figures
import Foundation
import Figures
import Thresholds
import TrainingEngine
import VirtualDog

/// The threshold simulation study (issue 38; docs/figures.md, "A threshold"): virtual dogs
/// with known thresholds through each procedure; the fitted threshold's error, the interval's
/// coverage, and the time a fit and its interval take.
struct BenchThreshold: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "threshold",
        abstract: "Simulate dogs with known thresholds through staircases and constant stimuli; fit, and score the fit."
    )

    @Option(help: "Virtual dogs per procedure.")
    var dogs = 200

    @Option(help: "Seed for the dogs and their answers.")
    var seed: UInt64 = 38

    @Option(help: "The curve of the dogs and of the fit: logistic or weibull.")
    var form = "logistic"

    @Option(help: "The interval: profile (profile likelihood) or bootstrap (parametric, percentile).")
    var interval = "profile"

    @Option(help: "Resamples for the bootstrap interval.")
    var resamples = 1000

    struct ProcedureReport: Encodable {
        var procedure: String
        var summary: ThresholdStudySummary
        var fitP50Ns: UInt64
        var fitP99Ns: UInt64
        var intervalP50Ns: UInt64
        var intervalP99Ns: UInt64
    }

    struct Report: Encodable {
        var dogs: Int
        var seed: UInt64
        var form: String
        var interval: String
        var ladder: String
        var stations: Int
        var procedures: [ProcedureReport]
        var seconds: Double
    }

    func run() throws {
        try researcherCommand {
            guard let form = PsychometricForm(rawValue: form) else {
                throw ValidationError("--form must be logistic or weibull, not \(form)")
            }
            guard dogs >= 1 else { throw ValidationError("--dogs must be at least 1, not \(dogs)") }
            var settings = ThresholdStudy.Settings()
            settings.dogs = dogs
            settings.seed = seed
            settings.form = form
            switch interval {
            case "profile": settings.interval = .profileLikelihood
            case "bootstrap": settings.interval = .bootstrap(resamples: resamples)
            default: throw ValidationError("--interval must be profile or bootstrap, not \(interval)")
            }
            let study = ThresholdStudy(settings: settings)
            let started = monotonicNow()
            var reports: [ProcedureReport] = []
            for procedure in [ThresholdStudy.Procedure.staircase(down: 2), .staircase(down: 3), .constantStimuli] {
                var results: [ThresholdStudy.Result] = []
                var fitNs: [UInt64] = []
                var intervalNs: [UInt64] = []
                for dog in 0..<dogs {
                    let run = try study.simulate(dog: dog, procedure)
                    // The fit and its interval timed apart: the interval refits many times.
                    let t0 = monotonicNow()
                    let fit = try study.fit(run)
                    let t1 = monotonicNow()
                    let interval = try study.interval(fit, dog: dog)
                    let t2 = monotonicNow()
                    results.append(ThresholdStudy.Result(run: run, fit: fit, interval: interval))
                    fitNs.append(t1 - t0)
                    intervalNs.append(t2 - t1)
                }
                reports.append(
                    ProcedureReport(
                        procedure: "\(procedure)",
                        summary: ThresholdStudySummary(procedure: "\(procedure)", results: results, stepLog10: 0.5),
                        fitP50Ns: percentile(fitNs, 50), fitP99Ns: percentile(fitNs, 99),
                        intervalP50Ns: percentile(intervalNs, 50), intervalP99Ns: percentile(intervalNs, 99)))
            }
            let ladder = settings.ladder.concentrations
            try printJSON(
                Report(
                    dogs: dogs, seed: seed, form: form.rawValue, interval: interval,
                    ladder: "\(ladder.count) half-log dilutions, \(ladder.first!) to \(ladder.last!)",
                    stations: settings.stations, procedures: reports,
                    seconds: Double(monotonicNow() - started) / 1e9),
                oneLine: true)
        }
    }
}
