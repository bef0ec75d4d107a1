import Foundation
import GRDB
import ReadingRows
import TrainingEngine

extension LogFilter {
    /// The one SQL condition for the session-level choices, on the session table's alias `s`,
    /// with numbered parameters `?first` to `?first+4` (bind `sessionArguments` there). Every
    /// query that selects trials, sessions, events or milestones by their session uses it, so
    /// `stats`, `report` and `export` select the same trials.
    func sessionCondition(_ s: String = "s", from first: Int) -> String {
        let p = (first..<first + 5).map { "?\($0)" }
        return """
            (\(p[0]) IS NULL OR \(s).mode = \(p[0]))
                AND (\(p[1]) IS NULL OR \(s).program_id IN (SELECT id FROM program WHERE name = \(p[1])))
                AND (\(p[2]) IS NULL OR \(s).phase = \(p[2])) AND (\(p[3]) IS NULL OR \(s).step = \(p[3]))
                AND (\(p[4]) IS NULL OR \(s).handler_id IN (SELECT id FROM handler WHERE code = \(p[4])))
            """
    }

    /// The values of `sessionCondition`'s parameters, in order.
    var sessionArguments: [DatabaseValue] {
        [
            mode?.rawValue.databaseValue ?? .null, program.databaseValue, phase.databaseValue, step.databaseValue,
            handler.databaseValue,
        ]
    }
}

/// Read-only access to the log: everything `lineupctl` shows the researcher. Its reads are in
/// LogReader+*.swift by concern (resolving ids, dogs and samples, sessions, progress).
public struct LogReader: Sendable {
    let database: any DatabaseReader
    public let path: String
    /// The private copy read instead of a log whose `-shm` is missing, kept while the reader is.
    let copy: TemporaryLogCopy?

    init(database: any DatabaseReader, path: String, copy: TemporaryLogCopy? = nil) {
        self.database = database
        self.path = path
        self.copy = copy
    }

    /// Runs `body` in one read transaction, so what it sees is one consistent state.
    public func read<T>(_ body: (Database) throws -> T) throws -> T {
        do {
            return try SessionLog.pastTornIndex { try database.read(body) }
        } catch {
            throw SessionLogError.from(error, path: path)
        }
    }

    // MARK: Backup

    /// A consistent copy through SQLite's online backup; the copy is a complete
    /// database on its own (no -wal file needed).
    public func backup(to destination: String) throws {
        try SessionLog.refuseLogFiles(output: destination, log: path, writing: "backup")
        if FileManager.default.fileExists(atPath: destination) {
            throw SessionLogError.invalidInput(
                "\(destination) already exists; choose a new file for the backup")
        }
        do {
            let copy = try DatabaseQueue(path: destination)
            try database.backup(to: copy)
            try copy.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA journal_mode = DELETE") }
            try copy.close()
        } catch {
            throw SessionLogError.from(error, path: destination)
        }
    }
}
