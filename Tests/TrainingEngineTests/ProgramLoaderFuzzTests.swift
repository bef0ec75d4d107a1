import Foundation
import ProgramFiles
import PropertyBased
import Testing

@testable import TrainingEngine

/// The program loader against random and mutated TOML: the shipped programs and a small one,
/// with numbers swapped for the edges of every type, lines inserted, dropped, doubled, bytes
/// flipped and files cut short, and lines of random keys and values. Nothing may trap; a
/// refusal is one line naming the file; what loads is within the project's ranges, lays out
/// and converts to the engine's nanoseconds, and its criterion can be met.
///
/// CI runs `defaultCases` from a pinned seed; `LINEUP_FUZZ_CASES=N` runs N (and
/// `LINEUP_FUZZ_SEED=S` another seed; `LINEUP_FUZZ_LAST=FILE` writes each case there first,
/// so the one that traps is left), e.g.
/// `LINEUP_FUZZ_CASES=200000 swift test --filter ProgramLoaderFuzzTests`. It prints how many
/// cases ran and how long they took.
@Suite struct ProgramLoaderFuzzTests {
    static let defaultCases = 3_000

    /// Numbers at the edges of Int64, Int32, Double and of the project's ranges, and not numbers.
    static let edges = [
        "0", "-0", "1", "-1", "2", "9223372036854775807", "-9223372036854775808", "9223372036854775808",
        "2147483647", "2147483648", "4294967296", "18446744073709551615", "1e300", "-1e300", "1e-300", "5e-324",
        "1.7976931348623157e308", "inf", "-inf", "nan", "+nan", "0.0", "-0.0", "0.5", "1.0", "15", "16", "17",
        "59.999", "60", "60.001", "100", "101", "1000", "1001", "3600", "3600.5", "10000", "10001", "1000000",
        "1000001", "1_000_000_000", "0x7fffffffffffffff", "0o777", "0b1", "\"10\"", "true", "[]", "{}",
        "1979-05-27T07:32:00Z", "1979-05-27", "07:32:00", "1979-05-27 07:32:00", "1979-05-27T", "0x", "1__0", "1e",
        "1e+", ".5", "5.", "+", "-", "_1", "0x_1", "nan1", "infinity", "1e-5", "-0x1", "00", "01", "1.2.3",
    ]

    static let keys = [
        "stations", "targets", "controls", "blanks", "distractors", "no_target_share", "max_same_station_in_a_row",
        "max_uses", "max_uses_per_dog", "novel_target_share", "hold_s", "inter_trial_s", "duration_s", "repeats",
        "trials", "n", "correct", "min_trials", "window", "accuracy",
    ]

    static let small = """
        name = "small"
        title = "Small"
        [[phases]]
        id = "p"
        title = "P"
        [[phases.steps]]
        id = "1"
        title = "S"
        mode = "automated"
        lineup = { stations = 2, targets = 1, controls = 1, max_same_station_in_a_row = 2, no_target_share = 0.1 }
        hold_s = 2
        inter_trial_s = 5
        criterion = [{ kind = "correct-within", correct = 4, min_trials = 10 }, { kind = "accuracy-window", accuracy = 0.9, window = 20 }]
        [[phases.steps.exercises]]
        id = "1"
        title = "E"
        instruction = "I"
        duration_s = 30
        repeats = 4
        trials = 20
        [[phases.steps]]
        id = "2"
        title = "T"
        mode = "trainer-led"
        lineup = { stations = 1, targets = 1 }
        criterion = { kind = "consecutive-correct", n = 3 }
        [[phases.steps.exercises]]
        id = "1"
        title = "E"
        instruction = "I"
        repeats = 4

        """

    static func bases() throws -> [String] {
        try Program.builtins().map(\.text) + [small]
    }

    /// One case: a base file and a few mutations, all drawn from `seed`.
    static func mutated(_ bases: [String], seed: UInt64) -> String {
        var random = SeededGenerator(seed: seed)
        var text = bases[random.below(bases.count)]
        // One case in ten is lines of random keys and values under random tables.
        if random.below(10) == 0 {
            var lines: [String] = []
            for _ in 0..<random.int(in: 1...30) {
                switch random.below(4) {
                case 0: lines.append(["[[phases]]", "[[phases.steps]]", "[[phases.steps.exercises]]"][random.below(3)])
                case 1: lines.append("\(keys[random.below(keys.count)]) = \(edges[random.below(edges.count)])")
                case 2:
                    let key = ["name", "title", "id", "instruction", "mode", "kind"][random.below(6)]
                    lines.append(
                        "\(key) = \"\(["a", "automated", "trainer-led", "double-blind", "n"][random.below(5)])\"")
                default:
                    let inner = (0..<random.int(in: 0...4)).map { _ in
                        "\(keys[random.below(keys.count)]) = \(edges[random.below(edges.count)])"
                    }
                    lines.append("\(["lineup", "criterion"][random.below(2)]) = { \(inner.joined(separator: ", ")) }")
                }
            }
            return lines.joined(separator: "\n")
        }
        for _ in 0..<random.int(in: 1...4) {
            var lines = text.components(separatedBy: "\n")
            let at = random.below(lines.count)
            switch random.below(8) {
            case 0, 1, 2:
                // A number replaced by an edge: the likeliest broken file.
                text = replacingANumber(in: text, with: edges[random.below(edges.count)], random: &random)
                continue
            case 3:
                lines.insert("\(keys[random.below(keys.count)]) = \(edges[random.below(edges.count)])", at: at)
            case 4: lines.remove(at: at)
            case 5: lines.insert(lines[at], at: at)
            case 6:
                var bytes = Array(text.utf8)
                if !bytes.isEmpty { bytes[random.below(bytes.count)] = UInt8(truncatingIfNeeded: random.next()) }
                text = String(decoding: bytes, as: UTF8.self)
                continue
            default:
                text = String(text.prefix(random.below(text.count + 1)))
                continue
            }
            text = lines.joined(separator: "\n")
        }
        return text
    }

    /// Replaces one run of digits (with its sign, point and exponent) by `edge`.
    static func replacingANumber(in text: String, with edge: String, random: inout SeededGenerator) -> String {
        let scalars = Array(text.unicodeScalars)
        var runs: [Range<Int>] = []
        var i = 0
        while i < scalars.count {
            guard ("0"..."9").contains(scalars[i]) else {
                i += 1
                continue
            }
            var start = i
            if start > 0 && (scalars[start - 1] == "-" || scalars[start - 1] == "+") { start -= 1 }
            while i < scalars.count && (("0"..."9").contains(scalars[i]) || ".eE_".unicodeScalars.contains(scalars[i]))
            {
                i += 1
            }
            runs.append(start..<i)
        }
        guard !runs.isEmpty else { return text }
        let run = runs[random.below(runs.count)]
        var result = String.UnicodeScalarView(scalars[..<run.lowerBound])
        result.append(contentsOf: edge.unicodeScalars)
        result.append(contentsOf: scalars[run.upperBound...])
        return String(result)
    }

    /// What a loaded program must be: everything the daemon will compute from it computes.
    static func checkLoaded(_ program: Program, _ text: String) {
        for phase in program.phases {
            for step in phase.steps {
                let lineup = step.lineup
                #expect(ProgramLimits.stations.contains(lineup.stations), "\(text)")
                #expect(lineup.targets + lineup.controls + lineup.blanks + lineup.distractors == lineup.stations)
                for exercise in step.exercises {
                    #expect(ProgramLimits.outOfRange(step: step, exercise: exercise) == nil, "\(text)")
                    let configuration = LineupMachine.Configuration(
                        step: step, exercise: exercise, stationCount: lineup.stations, hold: 2_000_000_000,
                        holdTolerance: 100_000_000)
                    #expect(configuration.searchTimeout <= 3_600_000_000_000)
                    var generator = LayoutGenerator(setup: lineup, samples: [], seed: 7)
                    let count = step.mode == .trainerLed ? exercise.repeats : exercise.trials
                    #expect(throws: Never.self, "\(text)") { _ = try generator.targetStations(count: count) }
                }
                // Without a criterion, each exercise is done by its rounds, all correct.
                for exercise in step.exercises where step.criterion == nil {
                    let rounds = Array(repeating: true, count: step.rounds(for: exercise))
                    #expect(step.exerciseCriterion(exercise).isMet(by: rounds), "\(text)")
                }
                // Met by the project's most trials a criterion may look at, all correct.
                if let criterion = step.criterion {
                    let allCorrect = Array(repeating: true, count: ProgramLimits.criterionTrials.upperBound)
                    #expect(criterion.isMet(by: allCorrect), "\(criterion) in \(text)")
                }
            }
        }
        try? program.validate(stationCount: 16)
        _ = ProgramProgress(program: program)
    }

    @Test func noFileTrapsTheLoaderAndEveryRefusalIsOneLine() throws {
        let environment = ProcessInfo.processInfo.environment
        let cases = environment["LINEUP_FUZZ_CASES"].flatMap { Int($0) } ?? Self.defaultCases
        let seed = environment["LINEUP_FUZZ_SEED"].flatMap { UInt64($0) } ?? 0x23_F022
        let bases = try Self.bases()
        var loaded = 0
        var refused = 0
        var keysRefused: Set<String> = []
        let clock = ContinuousClock()
        let started = clock.now
        forAll(count: cases, seed: seed, Gen.uint64()) { caseSeed in
            let text = Self.mutated(bases, seed: caseSeed)
            // A trap loses the case; `LINEUP_FUZZ_LAST=FILE` keeps each one there until the next.
            if let last = environment["LINEUP_FUZZ_LAST"] {
                try? text.write(toFile: last, atomically: false, encoding: .utf8)
            }
            do {
                let program = try Program.parse(toml: text, source: "fuzz.toml")
                loaded += 1
                Self.checkLoaded(program, text)
            } catch {
                refused += 1
                #expect(error is ProgramError, "\(error)")
                let message = "\(error)"
                #expect(message.hasPrefix("fuzz.toml: ") && message.count > 11, "\(message)")
                #expect(!message.contains("\n") && !message.contains("\r"), "\(message)\nfrom:\n\(text)")
                if let key = message.split(separator: ": ").dropFirst().first?.split(separator: ".").last {
                    keysRefused.insert(String(key))
                }
            }
        }
        let took = (clock.now - started).components
        let seconds = Double(took.seconds) + Double(took.attoseconds) / 1e18
        print(
            "program loader fuzz: \(cases) cases from seed \(seed) in \(String(format: "%.1f", seconds)) s: "
                + "\(loaded) loaded and checked, \(refused) refused in one line, no trap")
        // The mutations reach the loader's range checks, not only the TOML parser.
        #expect(loaded > cases / 20 && refused > cases / 4, "loaded \(loaded), refused \(refused)")
        #expect(keysRefused.isSuperset(of: ["trials", "duration_s", "controls", "hold_s", "n"]), "\(keysRefused)")
    }
}
