import Foundation
import Testing

/// The readings' house (docs/architecture.md, "Readings"): each ported reading is defined once
/// in Sources/Readings and runs on either store through the row interface (Sources/ReadingRows);
/// neither store counts it on its own, and lineupctl does not choose between them per reading.
@Suite(.ownThreads) struct ReadingsLayoutTests {
    let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources")

    /// Each reading in `ReadingName`: its definition, the counters from Figures only it may call,
    /// and the per-store helper lineupctl had for it before (which must not come back).
    static let ported: [(name: String, type: String, counters: [String], labHelper: String)] = [
        ("stats", "StatsReading", ["StatsGrouper("], "labStats"),
        ("guesses", "GuessReading", ["GuessCounter("], "labGuesses"),
        ("sources", "SourcesReading", ["ConfoundCounter("], "labSources"),
        ("familiarNovel", "FamiliarNovelReading", ["FamiliarNovelCounter("], "labFamiliarNovel"),
        ("threshold", "ThresholdReading", ["ThresholdCounter("], "labThresholds"),
        ("report", "ReportReading", ["ReportAssembly("], "reportLab"),
    ]

    /// Files that may still call a ported reading's counter, and why: each goes when what it
    /// reads is a reading too.
    static let notYetPorted: [String: String] = [:]

    /// Modules that bring a store: none belongs beneath a reading.
    static let storageModules: Set<String> = [
        "GRDB", "GRDBSQLite", "SQLite3", "CSQLite", "PostgresNIO", "NIO", "NIOCore", "NIOPosix", "NIOSSL", "LabStore",
    ]

    /// Every Swift file under `Sources/<folder>` (all of Sources when empty), as (path from
    /// Sources, its code without comment lines).
    func files(under folder: String = "") throws -> [(path: String, code: String)] {
        let base = folder.isEmpty ? sources : sources.appendingPathComponent(folder)
        let walker = try #require(FileManager.default.enumerator(atPath: base.path))
        var files: [(String, String)] = []
        for case let relative as String in walker where relative.hasSuffix(".swift") {
            let text = try String(contentsOf: base.appendingPathComponent(relative), encoding: .utf8)
            let code = text.split(separator: "\n", omittingEmptySubsequences: false)
                .filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("//") }.joined(separator: "\n")
            files.append((folder.isEmpty ? relative : folder + "/" + relative, code))
        }
        return files.sorted { $0.0 < $1.0 }
    }

    /// The modules a file's code imports (`@testable`, `@preconcurrency` and `import struct` too).
    static func imports(_ code: String) -> [String] {
        code.split(separator: "\n").compactMap { line -> String? in
            let words = line.trimmingCharacters(in: .whitespaces).split(separator: " ")
            guard let at = words.firstIndex(of: "import"), words[..<at].allSatisfy({ $0.hasPrefix("@") }),
                at + 1 < words.count
            else { return nil }
            let kinds: Set<Substring> = ["struct", "enum", "func", "class", "protocol", "typealias"]
            let named = kinds.contains(words[at + 1]) ? words.dropFirst(at + 2).first : words[at + 1]
            return named.map { String($0.split(separator: ".")[0]) }
        }
    }

    @Test func theReadingsAndTheFiguresImportNoStore() throws {
        var found: [String] = []
        for folder in ["Readings", "ReadingRows", "Figures"] {
            let files = try files(under: folder)
            #expect(!files.isEmpty, "Sources/\(folder) holds files")
            for (path, code) in files {
                for module in Self.imports(code) where Self.storageModules.contains(module) {
                    found.append("Sources/\(path): import \(module)")
                }
            }
        }
        #expect(found.isEmpty, "no store beneath a reading; found:\n\(found.joined(separator: "\n"))")
    }

    /// The readings, their rows and the figures stand on no store, in their code or in
    /// Package.swift, the station's log (SessionLog, GRDB beneath it) included: what a reading
    /// needs of the log's vocabulary (the filter, the row decoder) lives beneath them all.
    @Test func theReadingsLinkNeitherTheLogNorTheStore() throws {
        let targets = try SourceLayoutTests().packageTargets()
        #expect(targets["SessionLog"]?.contains("GRDB") == true, "the manifest is read: \(targets.keys.sorted())")
        let forbidden: Set = ["SessionLog", "LabStore", "LabLink", "GRDB", "PostgresNIO", "NIOSSL"]
        var found: [String] = []
        for module in ["Readings", "ReadingRows", "Figures"] {
            #expect(targets[module] != nil, "Package.swift declares \(module)")
            var linked: Set<String> = []
            var queue = [module]
            while let next = queue.popLast() {
                for dependency in targets[next] ?? [] where linked.insert(dependency).inserted {
                    queue.append(dependency)
                }
            }
            for name in linked.intersection(forbidden).sorted() { found.append("\(module) links \(name)") }
            for (path, code) in try files(under: module) {
                for name in Self.imports(code) where forbidden.contains(name) {
                    found.append("Sources/\(path): import \(name)")
                }
            }
        }
        #expect(found.isEmpty, "found:\n\(found.joined(separator: "\n"))")
    }

    @Test func everyReadingInTheListHasItsRules() throws {
        let list = try files(under: "Readings").first { $0.path.hasSuffix("/Readings.swift") }
        let code = try #require(list?.code)
        let body = try #require(code.range(of: "enum ReadingName")).upperBound
        let cases = code[body...].split(separator: "\n").compactMap { line -> String? in
            let words = line.trimmingCharacters(in: .whitespaces).split(separator: " ")
            return words.first == "case" ? words.dropFirst().first.map(String.init) : nil
        }
        #expect(!cases.isEmpty)
        #expect(cases == Self.ported.map(\.name), "ReadingName's cases and this suite's rules, one each")
    }

    /// A ported reading's counter is called in Sources/Readings only: the log (SessionLog), the
    /// store (LabStore) and the tools do not count it a second way.
    @Test func aPortedReadingIsCountedInTheReadingsOnly() throws {
        var found: [String] = []
        for (path, code) in try files() where !path.hasPrefix("Readings/") && !path.hasPrefix("Figures/") {
            for reading in Self.ported {
                for counter in reading.counters where code.contains(counter) && Self.notYetPorted[path] != counter {
                    found.append("Sources/\(path): \(counter) (the \(reading.name) reading's own)")
                }
            }
        }
        #expect(found.isEmpty, "each reading once, in Sources/Readings; found:\n\(found.joined(separator: "\n"))")
    }

    /// The store's SQL for the readings is written in one file of LabStore, its adapter.
    @Test func theStoreHoldsTheReadingsInItsAdapterOnly() throws {
        let files = try files(under: "LabStore")
        let adapters = files.filter { $0.code.contains("RowSource") || $0.code.contains("ReadingSQL") }.map(\.path)
        #expect(adapters == ["LabStore/LabReader+Rows.swift"], "\(adapters)")
    }

    /// The filter's words (`--dog`, `--session`, `--program`, `--handler`, `--step`) mean one
    /// thing, decided in ReadingRows (`FilterWords`, `FilterRules`): no store resolves them its
    /// own way.
    @Test func theFilterWordsAreResolvedInOnePlace() throws {
        var found: [String] = []
        for (path, code) in try files() where !path.hasPrefix("ReadingRows/") {
            // A trial's or a sample's id, as `correct` and `samples show` take them: not a filter word.
            if path == "SessionLog/LogReader+Resolve.swift" { continue }
            if code.contains("FilterRules.") { found.append("Sources/\(path): FilterRules") }
        }
        for (path, code) in try files(under: "LabStore") {
            for word in ["resolveSession(", "resolveProgram(", "resolveHandler(", "resolveStep("]
            where code.contains(word) {
                found.append("Sources/\(path): \(word)")
            }
        }
        #expect(found.isEmpty, "found:\n\(found.joined(separator: "\n"))")
    }

    /// lineupctl runs a ported reading once, on the source `--db` or `--lab` chose
    /// (ReadingSource.swift): no helper per store, no file choosing the store around it.
    @Test func lineupctlRunsAPortedReadingWithNoBranchOnTheStore() throws {
        let files = try files(under: "LineupctlTool")
        var found: [String] = []
        for reading in Self.ported {
            let callers = files.filter { $0.code.contains("\(reading.type)(") }
            #expect(callers.count == 1, "\(reading.type) run from one place in lineupctl: \(callers.map(\.path))")
            for (path, code) in callers {
                if !code.contains(".read(from: source.rows)") {
                    found.append("Sources/\(path): \(reading.type) not run on the chosen source")
                }
                if Self.imports(code).contains("LabStore") { found.append("Sources/\(path): imports LabStore") }
            }
            for (path, code) in files where code.contains("func \(reading.labHelper)(") {
                found.append("Sources/\(path): \(reading.labHelper)")
            }
        }
        // The store's reader is made in one file only (`labReadingSource`).
        for (path, code) in files where code.contains("LabReader") && path != "lineupctl/LabReading.swift" {
            found.append("Sources/\(path): LabReader")
        }
        #expect(found.isEmpty, "found:\n\(found.joined(separator: "\n"))")
    }
}
