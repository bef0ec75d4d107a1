import Foundation
import Testing

/// Thresholds sits below the engine (which may one day run its procedures): it imports no
/// module but the C library's maths, so it cannot reach a clock, a file or the log.
@Suite struct ThresholdsPurityTests {
    @Test func thresholdsImportsOnlyTheCLibrary() throws {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources/Thresholds")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".swift") }
        #expect(files.count >= 5)
        var imports: [String] = []
        for file in files {
            let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            for line in text.split(separator: "\n") where line.contains("import ") && !line.hasPrefix("//") {
                let module = line.split(separator: " ").last.map(String.init) ?? ""
                if !["Glibc", "Darwin"].contains(module) { imports.append("\(file): \(line)") }
            }
        }
        #expect(imports.isEmpty, "Thresholds imports only Glibc or Darwin; found:\n\(imports.joined(separator: "\n"))")
    }
}
