import ArgumentParser
import Foundation
import SessionLog
import StationControl
import TrainingEngine

// The researcher's dogs and samples: listed from the log, added and noted through lineupd.

struct Dogs: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the dogs, add one, or note on one.",
        discussion: """
            Examples:
              lineupctl dogs
              lineupctl dogs add Aino --born 2021-04-02
              lineupctl dogs note Aino "Calmer at the lineup since May"
              lineupctl dogs notes Aino
            """,
        subcommands: [List.self, Add.self, Note.self, Notes.self], defaultSubcommand: List.self)

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the dogs with their sessions and trials.")
        @OptionGroup var log: LogOptions

        func run() throws {
            try researcherCommand {
                let reader = try log.reader()
                let dogs = try reader.dogs()
                // The counts leave out a running double-blind session: said after them.
                let withheld = try reader.withheldSessions()
                defer { sayWithheld(withheld, "its session and trials are", toStandardError: log.json) }
                if log.json { return try printJSON(dogs) }
                printTable(
                    ["DOG", "ID", "BORN", "SESSIONS", "TRIALS", "LAST SESSION"],
                    dogs.map {
                        [
                            $0.name, short($0.id), $0.born.orDash, "\($0.sessions)", "\($0.trials)",
                            $0.lastSession.orDash,
                        ]
                    })
            }
        }
    }

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add a dog.", discussion: additionNote)
        @OptionGroup var target: AdditionOptions
        @Argument(help: "The dog's name.") var name: String
        @Option(help: ArgumentHelp("Date of birth, YYYY-MM-DD.", valueName: "date")) var born: String?
        @Option(help: "Free notes (no personal data of people).") var notes: String?

        func run() throws {
            try researcherCommand {
                // Checked here too, so a typo is caught before anything is sent.
                _ = try born.map { try ResearcherDate.validateDay($0) }
                let id = try target.add(
                    direct: { try $0.addDog(name: name, born: born, notes: notes).id },
                    daemon: { client throws(ControlClientError) in
                        try client.addDog(DogEntry(name: name, born: born, notes: notes))
                    })
                if target.log.json { return try printJSON(["id": id]) }
                say("added \(name): \(id)")
            }
        }
    }
}

extension Dogs {
    struct Note: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write a dog's notes as they stand from now on (the earlier notes are kept).",
            discussion: additionNote)
        @OptionGroup var target: AdditionOptions
        @Argument(help: "The dog's name (or id).") var dog: String
        @Argument(help: "The notes.") var text: String

        func run() throws {
            try researcherCommand {
                let id = try target.add(
                    direct: { try $0.noteDog(dog, text: text).id },
                    daemon: { client throws(ControlClientError) in
                        try client.noteDog(DogNoteEntry(dog: dog, text: text))
                    })
                if target.log.json { return try printJSON(["id": id]) }
                say("noted on \(dog)")
            }
        }
    }

    struct Notes: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "A dog's notes, oldest first: those it was added with, then each later one (the last stands).")
        @OptionGroup var log: LogOptions
        @Argument(help: "The dog's name (or id).") var dog: String

        func run() throws {
            try researcherCommand {
                let reader = try log.reader()
                let notes = try reader.dogNotes(dogId: try reader.resolveDog(dog))
                if log.json { return try printJSON(notes) }
                if notes.isEmpty { return say("\(dog) has no notes") }
                say(notes.map { "\($0.time)  \($0.text)" }.joined(separator: "\n"))
            }
        }
    }
}

struct Samples: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Scent samples: list, show, add, note.",
        discussion: """
            Examples:
              lineupctl samples
              lineupctl samples add T-0043 --kind target --diagnosis "lung cancer" --source "clinic A"
              lineupctl samples show T-0043
              lineupctl samples note T-0043 "tube cracked, replaced lid"
              lineupctl samples add T-0043/50 --stock T-0043 --factor 50 --diluent "mineral oil" --made-on 2026-11-20
              lineupctl samples add-ladder --stock T-0043 --factor 10 --steps 8 --diluent "mineral oil" --made-by R7
            """,
        subcommands: [List.self, Show.self, Add.self, AddLadder.self, Note.self], defaultSubcommand: List.self)

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the samples with how often each was used.")
        @OptionGroup var log: LogOptions
        @Option(help: "Only this kind: target, control, blank, distractor.") var kind: SampleKind?

        func run() throws {
            try researcherCommand {
                let reader = try log.reader()
                let samples = try reader.samples(kind: kind)
                let withheld = try reader.withheldSessions()
                defer { sayWithheld(withheld, "its uses of the samples are", toStandardError: log.json) }
                if log.json { return try printJSON(samples) }
                printTable(
                    ["SAMPLE", "KIND", "DIAGNOSIS", "SOURCE", "COLLECTED", "DILUTION", "USES", "NOTES"],
                    samples.map {
                        [
                            $0.label, $0.kind.rawValue, $0.facts.diagnosis.orDash, $0.facts.source.orDash,
                            $0.facts.collectedOn.orDash,
                            $0.dilution.map { d in
                                d.factor.map { "1:\(numberText($0)) of \(d.stock)" } ?? "of \(d.stock)"
                            }
                            .orDash,
                            "\($0.uses)", "\($0.notes)",
                        ]
                    })
            }
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show a sample, its notes and the dogs it met.")
        @OptionGroup var log: LogOptions
        @Argument(help: "The sample's label (or id).") var sample: String

        func run() throws {
            try researcherCommand {
                let reader = try log.reader()
                var details = try reader.sample(id: reader.resolveSample(sample))
                details.lab = try reader.sampleLabUses(sample: details.sample.id)
                // Its uses in a running double-blind session started with it are not counted yet.
                let withheld = try reader.withheldSessions().filter {
                    $0.uses(sample: details.sample.id, label: details.sample.label)
                }
                defer {
                    sayWithheld(withheld, "its uses of \(details.sample.label) are", toStandardError: log.json)
                }
                if log.json { return try printJSON(details) }
                let s = details.sample
                // The lab's part, once lineup-sync has pulled it: the limits count both.
                let used =
                    details.lab.map {
                        "\(s.uses + $0.usesElsewhere) trial(s): \(s.uses) here, \($0.usesElsewhere) on other stations as of \($0.asOf)"
                    } ?? "\(s.uses) trial(s)"
                var text = """
                    Sample      \(s.label) (\(s.kind.rawValue))
                    Id          \(s.id)
                    Diagnosis   \(s.facts.diagnosis.orDash)
                    Source      \(s.facts.source.orDash)
                    Collection  \(s.facts.collection.orDash)
                    Processing  \(s.facts.processing.orDash)
                    Collected   \(s.facts.collectedOn.orDash)
                    Dilution    \(s.dilution.map(dilutionText).orDash)
                    Added       \(s.added)
                    Used        \(used)\(s.maxUses.map { " (max_uses \($0))" } ?? "")

                    """
                // Uses per dog: each dog's exposure to the sample (docs/figures.md).
                let labDogs = details.lab?.dogs ?? []
                if !details.usedBy.isEmpty || !labDogs.isEmpty || s.maxUsesPerDog != nil {
                    text += "Per dog\(s.maxUsesPerDog.map { " (max_uses_per_dog \($0))" } ?? "")\n"
                }
                for use in details.usedBy {
                    if let lab = labDogs.first(where: { $0.dog == use.dog }) {
                        text +=
                            "  \(use.dog): \(use.uses + lab.usesElsewhere) trial(s): \(use.uses) here, last \(use.lastUsed); "
                            + "\(lab.usesElsewhere) on other stations as of \(lab.asOf)\n"
                    } else {
                        text += "  \(use.dog): \(use.uses) trial(s), last \(use.lastUsed)\n"
                    }
                }
                for lab in labDogs where !details.usedBy.contains(where: { $0.dog == lab.dog }) {
                    text +=
                        "  \(lab.dog): \(lab.usesElsewhere) trial(s): 0 here; \(lab.usesElsewhere) on other stations as of \(lab.asOf)\n"
                }
                if !details.notes.isEmpty { text += "Notes\n" }
                for note in details.notes { text += "  \(note.time)  \(note.text)\n" }
                writeOut(Data(text.utf8))
            }
        }
    }

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add a sample.", discussion: additionNote)
        @OptionGroup var target: AdditionOptions
        @Argument(help: "The sample's unique id as written on it.") var label: String
        @Option(help: "target, control, blank or distractor (a dilution: default its stock's).") var kind: SampleKind?
        @Option var diagnosis: String?
        @Option(help: "Where it came from (clinic, donor group).") var source: String?
        @Option(help: "How it was collected.") var collection: String?
        @Option(help: "How it was processed and stored.") var processing: String?
        @Option(help: ArgumentHelp("Collection date, YYYY-MM-DD.", valueName: "date")) var collectedOn: String?
        @Option(
            help: ArgumentHelp(
                "At most this many trials in all (default: the program's max_uses, if any).", valueName: "n"))
        var maxUses: Int?
        @Option(
            help: ArgumentHelp(
                "At most this many trials with any one dog (default: the program's max_uses_per_dog, if any).",
                valueName: "n"))
        var maxUsesPerDog: Int?
        @OptionGroup(title: "A dilution of a stock") var dilution: DilutionOptions

        func run() throws {
            try researcherCommand {
                let facts = SampleFacts(
                    diagnosis: diagnosis, source: source, collection: collection, processing: processing,
                    collectedOn: collectedOn)
                if let stock = dilution.stock {
                    if let given = facts.given.first {
                        throw SessionLogError.invalidInput(
                            "dilution \(label): \(given.fact.option) is its stock's (\(stock)): note how it was made with --diluent, --made-on, --made-by"
                        )
                    }
                    return try Samples.addDilutions(
                        target, stock: stock,
                        [
                            DilutionRung(
                                label: label, factor: dilution.factor, concentration: dilution.concentration,
                                unit: dilution.unit)
                        ], kind: kind, making: dilution.making, maxUses: maxUses, maxUsesPerDog: maxUsesPerDog)
                }
                if dilution.given {
                    throw SessionLogError.invalidInput(
                        "sample \(label): --factor, --concentration, --unit, --diluent, --made-on and --made-by are a dilution's: give its --stock"
                    )
                }
                guard let kind else {
                    throw SessionLogError.invalidInput(
                        "sample \(label): give its --kind (target, control, blank or distractor)")
                }
                _ = try facts.checked()
                for (name, limit) in [("--max-uses", maxUses), ("--max-uses-per-dog", maxUsesPerDog)] {
                    if let limit, limit < 1 {
                        throw SessionLogError.invalidInput(
                            "\(name) \(limit): a usage limit is at least 1 (leave it out for none)")
                    }
                }
                var entry = SampleEntry(label: label, kind: kind, facts: facts)
                entry.maxUses = maxUses
                entry.maxUsesPerDog = maxUsesPerDog
                let id = try target.add(
                    direct: {
                        try $0.addSample(
                            SampleRecord(
                                label: label, kind: kind, facts: facts, maxUses: maxUses, maxUsesPerDog: maxUsesPerDog)
                        ).id
                    },
                    daemon: { client throws(ControlClientError) in try client.addSample(entry) })
                if target.log.json { return try printJSON(["id": id]) }
                say("added sample \(label): \(id)")
            }
        }
    }

    struct Note: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add a note to a sample (notes are kept, never edited).", discussion: additionNote)
        @OptionGroup var target: AdditionOptions
        @Argument(help: "The sample's label (or id).") var sample: String
        @Argument(help: "The note.") var text: String

        func run() throws {
            try researcherCommand {
                let id = try target.add(
                    direct: { try $0.noteSample(sample, text: text).id },
                    daemon: { client throws(ControlClientError) in
                        try client.noteSample(SampleNoteEntry(sample: sample, text: text))
                    })
                if target.log.json { return try printJSON(["id": id]) }
                say("noted on \(sample)")
            }
        }
    }
}
