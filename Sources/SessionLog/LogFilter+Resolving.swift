import Foundation
import ReadingRows

/// What turns the researcher's words (`--dog Rex`, `--session 3f2a`, `--step phase-3/1`) into a
/// `LogFilter`: `FilterWords` (ReadingRows), one definition on a station's or a merged log and
/// on the lab store alike.
public protocol FilterResolving {
    func resolveDog(_ text: String) throws -> String
    func resolveSession(_ text: String) throws -> String
    func resolveProgram(_ name: String) throws -> String
    func resolveHandler(_ code: String) throws -> String
    func resolveStep(_ text: String) throws -> (phase: String, step: String?)
}

extension FilterWords: FilterResolving {
    public func resolveDog(_ text: String) throws -> String { try dog(text) }
    public func resolveSession(_ text: String) throws -> String { try session(text) }
    public func resolveProgram(_ name: String) throws -> String { try program(name) }
    public func resolveHandler(_ code: String) throws -> String { try handler(code) }
    public func resolveStep(_ text: String) throws -> (phase: String, step: String?) { try step(text) }
}

/// The log's words resolved by `FilterWords`; a refusal comes out of the log's read as
/// `SessionLogError` (`SessionLogError.from`), as every reader of the log expects it (the page's
/// 404 for an unknown dog, lineupd's refusals), in the same sentences.
extension LogReader: FilterResolving {
    public func resolveDog(_ text: String) throws -> String { try FilterWords(self).dog(text) }
    public func resolveSession(_ text: String) throws -> String { try FilterWords(self).session(text) }
    public func resolveProgram(_ name: String) throws -> String { try FilterWords(self).program(name) }
    public func resolveHandler(_ code: String) throws -> String { try FilterWords(self).handler(code) }
    public func resolveStep(_ text: String) throws -> (phase: String, step: String?) {
        try FilterWords(self).step(text)
    }
}

extension SessionLogError {
    /// A filter word's refusal (`FilterWordError`) in the log's own error, the same words.
    init(_ word: FilterWordError) {
        switch word {
        case .unknown(let kind, let text, _): self = kind == "dog" ? .unknownDog(text) : .unknownSession(text)
        case .ambiguousId(let text, let kind): self = .ambiguousId(text, kind: kind)
        case .ambiguousDogName(let name, let ids): self = .ambiguousDogName(name, ids: ids)
        case .notFound(let text): self = .invalidInput(text)
        }
    }
}
