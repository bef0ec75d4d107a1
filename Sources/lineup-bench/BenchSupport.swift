import ArgumentParser
import Foundation
import SessionLog
import StationLogging

/// Runs a benchmark's body; any failure becomes one line on stderr and exit status 1.
func researcherCommand(_ body: () throws -> Void) throws {
    do {
        try body()
    } catch let exit as ExitCode {
        throw exit
    } catch let error as SessionLogError {
        printError(error.description)
        throw ExitCode(1)
    } catch {
        printError(String(describing: error))
        throw ExitCode(1)
    }
}

/// lineup-bench's one voice on stderr: the station's logging set-up (`lineup-bench: message`).
func printError(_ message: String) {
    StationLogging.bootstrap(program: "lineup-bench")
    benchLog.error("\(message)")
}

let benchLog = StationLogging.logger("lineup-bench")

/// One object on one line, for scripts that read a line each (or pretty, for a person).
func printJSON<T: Encodable>(_ value: T, oneLine: Bool = false) throws {
    let encoder = JSONEncoder()
    encoder.keyEncodingStrategy = .convertToSnakeCase
    encoder.outputFormatting =
        oneLine ? [.sortedKeys, .withoutEscapingSlashes] : [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    var data = try encoder.encode(value)
    data.append(10)
    FileHandle.standardOutput.write(data)
}

func say(_ text: String) {
    FileHandle.standardOutput.write(Data((text + "\n").utf8))
}

private final class ResultBox<T: Sendable>: @unchecked Sendable {
    var result: Result<T, any Error>?
}

/// Runs the lab store's asynchronous client to its end from a synchronous benchmark.
func waitFor<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) throws -> T {
    let box = ResultBox<T>()
    let done = DispatchSemaphore(value: 0)
    Task {
        do { box.result = .success(try await work()) } catch { box.result = .failure(error) }
        done.signal()
    }
    done.wait()
    return try box.result!.get()
}

/// The directory this executable is in: lineupd, lineupctl and lineup-sync are built beside it.
func besideThisExecutable(_ name: String) -> URL {
    URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        .appendingPathComponent(name)
}

// `export --what` as lineupctl reads it (lineupctl declares the same for its own commands).
extension ExportTable: ExpressibleByArgument {}
