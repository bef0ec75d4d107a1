import Foundation
import Testing

/// The figures module is pure (docs/architecture.md): every counter and statistic computed from
/// plain values, with no storage beneath it, so a figure is tested from hand-built trials and
/// the lab store counts a PostgreSQL row without linking SQLite.
@Suite struct FiguresLayoutTests {
    let figures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources/Figures")

    /// Modules a storage dependency comes through: SQLite (GRDB), PostgreSQL (PostgresNIO and
    /// the NIO it runs on), and the modules built on them.
    static let storageModules: Set<String> = [
        "GRDB", "GRDBSQLite", "SQLite3", "CSQLite", "PostgresNIO", "NIO", "NIOCore", "NIOPosix", "NIOSSL",
        "SessionLog", "LabStore", "StationRuntime", "StationIO", "WebAccounts",
    ]
    /// Foundation's ways to reach a file, a process or the network: none belongs in a figure.
    static let inputOutput = [
        "FileManager", "FileHandle", "contentsOf:", "contentsOfFile", "fopen", "Process(", "ProcessInfo",
        "URLSession", "InputStream", "OutputStream", "write(to", "atomically:",
    ]

    func files() throws -> [(path: String, text: String)] {
        let names = try FileManager.default.contentsOfDirectory(atPath: figures.path).filter { $0.hasSuffix(".swift") }
        return try names.sorted().map {
            ($0, try String(contentsOf: figures.appendingPathComponent($0), encoding: .utf8))
        }
    }

    /// The imports a file's text declares, `@testable` and `@preconcurrency` ones included.
    static func imports(_ text: String) -> [String] {
        text.split(separator: "\n").compactMap { line -> String? in
            let words = line.trimmingCharacters(in: .whitespaces).split(separator: " ")
            guard let at = words.firstIndex(of: "import"), words[..<at].allSatisfy({ $0.hasPrefix("@") }),
                at + 1 < words.count
            else { return nil }
            // `import struct Foundation.Date` names the module after the kind.
            let named =
                words[at + 1] == "struct" || words[at + 1] == "enum" || words[at + 1] == "func"
                ? words.dropFirst(at + 2).first : words[at + 1]
            return named.map { String($0.split(separator: ".")[0]) }
        }
    }

    @Test func theFiguresModuleImportsNoStorage() throws {
        let files = try files()
        #expect(files.contains { $0.path == "Figures.swift" }, "Sources/Figures holds the figures")
        var found: [String] = []
        for (path, text) in files {
            for module in Self.imports(text) where Self.storageModules.contains(module) {
                found.append("Sources/Figures/\(path): import \(module)")
            }
            let code = text.split(separator: "\n").filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("//") }
                .joined(separator: "\n")
            for word in Self.inputOutput where code.contains(word) {
                found.append("Sources/Figures/\(path): \(word)")
            }
        }
        #expect(
            found.isEmpty,
            "Figures is pure: no storage module and no file, process or network I/O; found:\n\(found.joined(separator: "\n"))"
        )
    }

    /// The check above would pass on files it cannot read right: it must see each kind of import.
    @Test func theImportCheckSeesEveryFormOfImport() {
        #expect(
            Self.imports("import GRDB\n@testable import SessionLog\n@preconcurrency import PostgresNIO") == [
                "GRDB", "SessionLog", "PostgresNIO",
            ])
        #expect(Self.imports("import struct GRDB.Row\n  import Foundation") == ["GRDB", "Foundation"])
        #expect(Self.imports("// we import nothing here\nlet imported = 1") == [])
    }
}
