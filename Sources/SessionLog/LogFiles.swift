import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The files one log is made of, and how the researcher's tools stay off them: an output never
/// lands on any of them, and a source is read without changing a byte of any of them.
extension SessionLog {
    /// What SQLite keeps beside a log: the write-ahead log, its index, a rollback journal.
    public static let companionSuffixes = ["-wal", "-shm", "-journal"]

    /// Refuses, in one line and before anything is written, an output that is the log `log` or
    /// one of its companion files. One check for every command that writes a file (`backup`,
    /// `report -o`, `merge --into`): an existing output is compared by identity (device and
    /// inode, so a hard link or symlink is caught), one not yet there by its path with every
    /// symlink of its directory resolved (a `-wal` that does not exist yet would still be
    /// SQLite's the moment a writer opens the log).
    public static func refuseLogFiles(output: String, log: String, writing what: String) throws {
        let files = [log] + companionSuffixes.map { log + $0 }
        var out = stat()
        if stat(output, &out) == 0 {
            for file in files {
                var other = stat()
                if stat(file, &other) == 0, other.st_dev == out.st_dev, other.st_ino == out.st_ino {
                    throw refusal(output, file: file, log: log, what: what)
                }
            }
        }
        guard let resolvedOutput = resolved(output) else { return }
        let base = resolved(log) ?? log
        for (file, suffix) in zip(files, [""] + companionSuffixes) where resolvedOutput == base + suffix {
            throw refusal(output, file: file, log: log, what: what)
        }
    }

    private static func refusal(_ output: String, file: String, log: String, what: String) -> SessionLogError {
        let which = file == log ? "is the session log \(log)" : "is \(file), a file of the session log \(log)"
        return .invalidInput("\(output) \(which): choose another file for the \(what); nothing was written")
    }

    /// The path with its directory's symlinks resolved (and the file's own, when it is a
    /// link to something that exists); nil when the directory does not exist.
    static func resolved(_ path: String) -> String? {
        if let full = realpath(path, nil) {
            defer { free(full) }
            return String(cString: full)
        }
        let url = URL(fileURLWithPath: path)
        guard let directory = realpath(url.deletingLastPathComponent().path, nil) else { return nil }
        defer { free(directory) }
        return String(cString: directory) + "/" + url.lastPathComponent
    }

    /// The SQLite URI that opens a log strictly read-only, for every reading command and for a
    /// merge's sources. Measured on SQLite 3.40 with a pending WAL (a writer killed, and a
    /// writer still running): `mode=ro` alone never checkpoints or deletes `-wal`, but it still
    /// writes its read marks into `-shm`, so the source's bytes change; `readonly_shm=1` opens
    /// `-shm` read-only too (SQLite reads the WAL into its own memory when no writer vouches for
    /// the index), and main, `-wal` and `-shm` stay byte-identical, with or without a writer.
    /// Debian builds SQLite with URI filenames on (`USE_URI`); without them this name is no
    /// file, so the open fails rather than writing.
    static func readOnlyURI(_ path: String) -> String {
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "?#%")
        return "file:" + (absolute.addingPercentEncoding(withAllowedCharacters: allowed) ?? absolute)
            + "?mode=ro&readonly_shm=1"
    }

    /// A WAL log whose `-shm` is missing cannot be opened with a read-only index: SQLite must
    /// create it, and a group member who may only read the directory cannot. Such a log has no
    /// writer (a running lineupd keeps its `-shm`), so the main file and its `-wal` are copied
    /// into a private directory and read there; the original is never opened.
    static func privateCopy(of path: String) throws -> TemporaryLogCopy {
        var template = Array(
            FileManager.default.temporaryDirectory.appendingPathComponent("lineup-read-XXXXXX").path.utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw SessionLogError.cannotOpen(
                path: path,
                reason:
                    "\(path)-shm is missing and a copy to read cannot be made in the temporary directory: \(String(cString: strerror(errno)))"
            )
        }
        let copy = TemporaryLogCopy(directory: String(cString: made))
        do {
            try FileManager.default.copyItem(atPath: path, toPath: copy.path)
            if FileManager.default.fileExists(atPath: path + "-wal") {
                try FileManager.default.copyItem(atPath: path + "-wal", toPath: copy.path + "-wal")
            }
        } catch {
            throw SessionLogError.cannotOpen(
                path: path,
                reason: "\(path)-shm is missing and the log cannot be copied to read it: \(error.localizedDescription)")
        }
        return copy
    }
}

/// A private copy of a log, removed with the last reader that uses it.
final class TemporaryLogCopy: Sendable {
    let directory: String
    var path: String { directory + "/lineup.db" }

    init(directory: String) { self.directory = directory }

    deinit { try? FileManager.default.removeItem(atPath: directory) }
}
