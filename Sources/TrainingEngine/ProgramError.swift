/// What is wrong with a program file, and where.
public struct ProgramError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file (or `built-in:study.toml`).
    public var file: String
    /// Where in the file, e.g. `phases[2].steps[1].exercises[0].duration_s`; empty for the whole file.
    public var keyPath: String
    public var problem: String

    public init(file: String, keyPath: String, problem: String) {
        self.file = file
        self.keyPath = keyPath
        self.problem = problem
    }

    public var description: String {
        keyPath.isEmpty ? "\(file): \(problem)" : "\(file): \(keyPath): \(problem)"
    }
}
