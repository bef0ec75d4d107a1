import Foundation
import Testing
import TrainingEngine

/// A sample's research facts are declared once, in TrainingEngine's SampleFacts (issue 34, "one
/// vocabulary per fact"): a type that carries a sample embeds that value, so adding a fact is
/// one line there and every record, wire, listing and page carries it. This fails when another
/// type declares a fact of its own again.
@Suite(.ownThreads) struct SampleFactsLayoutTests {
    static let home = "TrainingEngine/SampleFacts.swift"
    /// Fact names that are also other things' words: a program's, a merge's or a configuration
    /// file's `source` is no sample's. Such a name counts only beside another fact.
    static let sharedWords: Set<String> = ["source"]

    /// The facts each type of `code` declares a property (or, roughly, a local) for, each once,
    /// by the type (the nearest declaration above them).
    static func factProperties(_ code: String) -> [String: [String]] {
        let facts = Set(SampleFacts.Fact.allCases.map(\.rawValue))
        let modifiers: Set<Substring> = ["public", "private", "fileprivate", "internal", "package", "static"]
        let kinds: Set<Substring> = ["struct", "class", "enum", "actor", "extension"]
        var type = "(file)"
        var found: [String: [String]] = [:]
        for line in code.split(separator: "\n") {
            // A line's words up to its first `:`, `<` or `{`, its access words dropped.
            let head = line.prefix(while: { !":<{=".contains($0) })
            let words = head.split(separator: " ").drop(while: { modifiers.contains($0) })
            guard let first = words.first, let second = words.dropFirst().first else { continue }
            if kinds.contains(first) {
                type = String(second)
            } else if first == "var" || first == "let", facts.contains(String(second)),
                !(found[type] ?? []).contains(String(second))
            {
                found[type, default: []].append(String(second))
            }
        }
        return found
    }

    @Test func noTypeButSampleFactsDeclaresASamplesFacts() throws {
        var found: [String] = []
        for (path, text) in try SourceLayoutTests().swiftFiles() where path != Self.home {
            for (type, names) in Self.factProperties(text)
            where names.count > 1 || names.contains(where: { !Self.sharedWords.contains($0) }) {
                found.append("Sources/\(path): \(type) declares \(names.joined(separator: ", "))")
            }
        }
        #expect(
            found.isEmpty,
            "a sample's facts belong in SampleFacts (embed it); declared again in:\n\(found.joined(separator: "\n"))")
    }

    /// The check finds what it is for: SampleFacts' own declarations, and a copy of them.
    @Test func theCheckFindsADeclaredFact() throws {
        let home = try String(
            contentsOf: SourceLayoutTests().sources.appendingPathComponent(Self.home), encoding: .utf8)
        #expect(Self.factProperties(home)["SampleFacts"] == SampleFacts.Fact.allCases.map(\.rawValue))
        let copy = "public struct LabThing: Codable {\n    public var id: String\n    var processing: String?\n}\n"
        #expect(Self.factProperties(copy) == ["LabThing": ["processing"]])
        let program = "struct Program {\n    public var source: String\n}\n"
        #expect(Self.factProperties(program) == ["Program": ["source"]])
    }
}
