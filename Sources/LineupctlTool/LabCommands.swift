import ArgumentParser
import Foundation
import LabLink

/// `lineupctl lab`: the lab's registry in the lab store (PostgreSQL): its dogs and samples
/// across every station, and dog merges recorded and undone (docs/lab.md).
struct LabCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lab",
        abstract: "The lab's registry in the lab store: dogs and samples of every station, dog merges.",
        discussion: """
            Each command reads the store's address and password from a connection file (--lab, mode 0600; \
            docs/lab.md). Dogs are named by id or an id prefix, never by name: two dogs of one name on two \
            stations are two dogs until a merge, recorded with its reason, says they are one. Recording or \
            undoing a merge needs a login in the role lineup_registrar.
            """,
        subcommands: [LabDogs.self, LabDogMerge.self, LabDogUnmerge.self, LabSamples.self])
}

/// The connection file every lab command takes.
struct LabRegistryOptions: ParsableArguments {
    @Option(
        name: .customLong("lab"),
        help: ArgumentHelp(
            "The lab store: a connection file (key = value lines, mode 0600) or "
                + "postgres://user@host:port/database with no password in it (it comes from ~/.pgpass).",
            valueName: "address"))
    var file = "/etc/lineup/lab-store.conf"

    /// Connects (through the store's client, `LabLink`), runs `body` against the registry and
    /// closes; any failure is one line on stderr and exit status 1 (2 for a connection file that
    /// cannot be used).
    func run(_ body: (LabLink) throws -> Void) throws {
        do {
            let link = try LabLink.open(file, registry: true)
            defer { link.close() }
            try body(link)
        } catch let error as LabLinkError {
            printError(error.description)
            throw ExitCode(error.status)
        } catch {
            printError("\(error)")
            throw ExitCode(1)
        }
    }
}

struct LabDogs: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dogs",
        abstract: "List the lab's dogs: id, name, the station each was made on, the dog it is merged into.")
    @OptionGroup var lab: LabRegistryOptions
    @Flag(help: "Print JSON.") var json = false

    func run() throws {
        try lab.run { registry in
            let dogs = try registry.call(.dogs, as: [LabDog].self)
            if json { return try printJSON(dogs) }
            printTable(
                ["DOG", "ID", "STATION", "MERGED INTO", "MERGE", "COUNTS AS"],
                dogs.map {
                    [
                        $0.name, $0.id, short($0.stationId), short($0.mergedInto), short($0.mergeId),
                        $0.countsAs == $0.id ? "itself" : "\($0.countsAsName) \(short($0.countsAs))",
                    ]
                })
        }
    }
}

struct LabDogMerge: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dog-merge",
        abstract: "Record that two dogs are one: MERGED counts as KEEP from now on (undo with dog-unmerge).",
        discussion: """
            Nothing is rewritten: the merge is a row of its own, with who recorded it (the login), why and \
            when (the server's clock). Refused: an unknown dog, a dog merged into itself, a dog merged \
            already, and a merge that would make a cycle.
            """)
    @OptionGroup var lab: LabRegistryOptions
    @Argument(help: "The dog kept: its id or an id prefix.") var keep: String
    @Argument(help: "The dog merged into it: its id or an id prefix.") var merged: String
    @Option(help: "Why the two are one dog (kept with the merge).") var why: String

    func run() throws {
        try lab.run { registry in
            let id = try registry.call(.mergeDogs(keep: keep, merged: merged, why: why), as: String.self)
            say("merge \(id) recorded: dog \(merged) counts as dog \(keep)")
        }
    }
}

struct LabDogUnmerge: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dog-unmerge",
        abstract: "Undo a dog merge: its two dogs are two again (the merge and its undoing both stay recorded).")
    @OptionGroup var lab: LabRegistryOptions
    @Argument(help: "The merge: its id or an id prefix (lab dogs shows it).") var merge: String
    @Option(help: "Why the merge no longer applies (kept with the undoing).") var why: String

    func run() throws {
        try lab.run { registry in
            let id = try registry.call(.undoMerge(merge: merge, why: why), as: String.self)
            say("merge \(merge) undone (undo \(id))")
        }
    }
}

struct LabSamples: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "samples",
        abstract: "List the lab's samples with their uses over every station's trials and their limits.")
    @OptionGroup var lab: LabRegistryOptions
    @Flag(help: "Print JSON.") var json = false

    func run() throws {
        try lab.run { registry in
            let samples = try registry.call(.samples, as: [LabSample].self)
            if json { return try printJSON(samples) }
            printTable(
                ["SAMPLE", "ID", "KIND", "STATION", "USES", "MAX USES", "PER DOG", "STATIONS USED"],
                samples.map {
                    [
                        $0.label, short($0.id), $0.kind, short($0.stationId), "\($0.uses)",
                        $0.maxUses.map(String.init).orDash, $0.maxUsesPerDog.map(String.init).orDash,
                        "\($0.stationsUsed)",
                    ]
                })
        }
    }
}
