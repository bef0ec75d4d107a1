import Foundation
import Testing

/// How the sources are laid out, as docs/architecture.md says: the training engine imports
/// no module but the C library's maths and Thresholds (itself pure: no Foundation, no parser),
/// and a source file over 500 lines says why at its top.
@Suite(.ownThreads) struct SourceLayoutTests {
    let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources")

    /// Every Swift file under `Sources/<folder>`, as (path from Sources, text).
    func swiftFiles(under folder: String = "") throws -> [(path: String, text: String)] {
        let base = folder.isEmpty ? sources : sources.appendingPathComponent(folder)
        let walker = try #require(FileManager.default.enumerator(atPath: base.path))
        var files: [(String, String)] = []
        for case let relative as String in walker where relative.hasSuffix(".swift") {
            let text = try String(contentsOf: base.appendingPathComponent(relative), encoding: .utf8)
            files.append((folder.isEmpty ? relative : folder + "/" + relative, text))
        }
        return files.sorted { $0.0 < $1.0 }
    }

    @Test func theTrainingEngineImportsOnlyTheCLibrary() throws {
        let files = try swiftFiles(under: "TrainingEngine")
        #expect(files.count > 5)
        var imports: [String] = []
        for (path, text) in files {
            for line in text.split(separator: "\n", omittingEmptySubsequences: false)
            where line.trimmingCharacters(in: .whitespaces).hasPrefix("import ")
                || line.contains("@preconcurrency import") || line.contains("@testable import")
            {
                let module = line.split(separator: " ").last.map(String.init) ?? ""
                // Glibc or Darwin: the C library's maths, which does no I/O; Thresholds, the
                // procedures the engine runs, imports only those (ThresholdsTests' PurityTests).
                if !["Glibc", "Darwin", "Thresholds"].contains(module) {
                    imports.append("\(path): \(line.trimmingCharacters(in: .whitespaces))")
                }
            }
        }
        #expect(
            imports.isEmpty,
            "TrainingEngine is pure and imports no module but the C library; found:\n\(imports.joined(separator: "\n"))"
        )
    }

    /// The re-scorer is a second implementation only if it cannot call the first: it imports
    /// no module at all (docs/figures.md, "How the re-scorer decides").
    @Test func theRescorerImportsNothing() throws {
        let files = try swiftFiles(under: "Rescoring")
        #expect(files.count >= 2)
        let imports = files.flatMap { file in
            file.text.split(separator: "\n").filter { $0.trimmingCharacters(in: .whitespaces).hasPrefix("import ") }
                .map { "\(file.path): \($0)" }
        }
        #expect(imports.isEmpty, "Rescoring imports nothing; found:\n\(imports.joined(separator: "\n"))")
    }

    @Test func aFileOver500LinesSaysWhyAtItsTop() throws {
        var unexplained: [String] = []
        for (path, text) in try swiftFiles() {
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
            let count = lines.last == "" ? lines.count - 1 : lines.count
            guard count > 500 else { continue }
            // The reason is a comment among the first lines that names the size.
            let top = lines.prefix(5).filter { $0.hasPrefix("//") }.joined(separator: " ")
            if !top.contains("500 lines") { unexplained.append("Sources/\(path): \(count) lines") }
        }
        #expect(
            unexplained.isEmpty,
            "split these by concern, or say at the top why not (a comment naming \"500 lines\"):\n\(unexplained.joined(separator: "\n"))"
        )
    }

    /// No source traps on an error with `try!`: a failure is a message, never a crash (issue 32:
    /// `stats … | head -1` crashed in one). A constant that cannot fail is built without `try`.
    @Test func noSourceUsesTryBang() throws {
        var found: [String] = []
        for (path, text) in try swiftFiles() {
            for (n, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
            where line.contains("try!") && !line.trimmingCharacters(in: .whitespaces).hasPrefix("//") {
                found.append("Sources/\(path):\(n + 1)")
            }
        }
        #expect(found.isEmpty, "try! in: \(found)")
    }

    /// Package.swift's targets: each one's local targets and products it depends on.
    func packageTargets() throws -> [String: [String]] {
        let manifest = sources.deletingLastPathComponent().appendingPathComponent("Package.swift")
        let code = try String(contentsOf: manifest, encoding: .utf8).split(separator: "\n")
            .filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("//") }.joined(separator: "\n")
        var targets: [String: [String]] = [:]
        let starts = [".target(", ".executableTarget(", ".testTarget(", ".systemLibrary("]
        var rest = Substring(code)
        while let start = starts.compactMap({ rest.range(of: $0) }).min(by: { $0.lowerBound < $1.lowerBound }) {
            rest = rest[start.upperBound...]
            // This target's text runs to the next target's start.
            let end = starts.compactMap { rest.range(of: $0)?.lowerBound }.min() ?? rest.endIndex
            let text = rest[..<end]
            guard let name = text.firstMatch(of: /name: "([^"]+)"/)?.1 else { continue }
            var dependencies: [String] = []
            if let list = text.range(of: "dependencies: [") {
                var depth = 1
                var at = list.upperBound
                while at < text.endIndex, depth > 0 {
                    if text[at] == "[" { depth += 1 } else if text[at] == "]" { depth -= 1 }
                    at = text.index(after: at)
                }
                let words = text[list.upperBound..<at]
                // A product by its name; a local target as a bare quoted name.
                dependencies += words.matches(of: /\.product\(name: "([^"]+)"/).map { String($0.1) }
                let bare = words.replacing(/\.product\([^)]*\)/, with: "")
                dependencies += bare.matches(of: /"([^"]+)"/).map { String($0.1) }
            }
            targets[String(name)] = dependencies
        }
        return targets
    }

    /// Every target `target` links, through the manifest's dependencies.
    func linked(from target: String, in targets: [String: [String]]) -> Set<String> {
        var linked: Set<String> = []
        var queue = [target]
        while let next = queue.popLast() {
            for dependency in targets[next] ?? [] where linked.insert(dependency).inserted { queue.append(dependency) }
        }
        return linked
    }

    static let network: Set = [
        "LabStore", "PostgresNIO", "NIOSSL", "NIO", "NIOCore", "NIOPosix", "Hummingbird", "AsyncHTTPClient",
    ]

    /// The station's everyday tool builds without the lab store's client and its TLS (issue 35:
    /// they made the README's first command take 10 minutes): lineupctl reaches the store through
    /// a child process (LabLink, `lineup-sync lab-link`), and nothing beneath it links them.
    @Test func lineupctlLinksNoLabStoreClientOrTLS() throws {
        let targets = try packageTargets()
        #expect(targets["LabStore"]?.contains("PostgresNIO") == true, "the manifest is read: \(targets.keys.sorted())")
        let linked = linked(from: "lineupctl", in: targets)
        #expect(linked.contains("LabLink") && linked.contains("SessionLog"), "\(linked.sorted())")
        #expect(linked.isDisjoint(with: Self.network), "lineupctl links \(linked.intersection(Self.network).sorted())")
    }

    /// lineupd has no network code; the package's multi-call binary (lineup-net, issue 35) holds
    /// lineupctl and the three network tools, and lineupd stays its own binary.
    @Test func lineupdLinksNoNetworkAndLineupNetHoldsTheOtherFour() throws {
        let targets = try packageTargets()
        let daemon = linked(from: "lineupd", in: targets)
        #expect(daemon.contains("StationRuntime"), "\(daemon.sorted())")
        #expect(daemon.isDisjoint(with: Self.network), "lineupd links \(daemon.intersection(Self.network).sorted())")
        let net = linked(from: "lineup-net", in: targets)
        for tool in ["LineupctlTool", "LineupWebTool", "LineupSyncTool", "LineupAlertsTool"] {
            #expect(net.contains(tool), "lineup-net lacks \(tool): \(net.sorted())")
        }
    }
}
