import Foundation
import Testing

/// `lineup-bench click` as CI runs it, for a few clicks: the station's own path (the engine
/// handler, its log feeder, a real log) clicks for every pulse of the trainer's clicker, logs
/// every edge it read, and allocates nothing on the hot thread. Timings are never asserted.
@Suite(.ownThreads) struct BenchClickTests {
    private static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The built lineup-bench's one JSON object, or nil (and a recorded issue) when it is not built.
    private func bench(_ arguments: [String]) throws -> [String: Any]? {
        let tool = Self.root.appendingPathComponent(".build/debug/lineup-bench")
        guard FileManager.default.isExecutableFile(atPath: tool.path) else {
            Issue.record("lineup-bench is not built: run `swift build` before `swift test`")
            return nil
        }
        let process = Process()
        process.executableURL = tool
        process.arguments = ["click"] + arguments
        let out = Pipe()
        process.standardOutput = out
        // The storm makes the engine flag every station as chattering, one line each.
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let text = String(decoding: data, as: UTF8.self)
        let line = try #require(text.split(separator: "\n").last, "no output")
        return try #require(
            try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "not a JSON object: \(line)")
    }

    @Test func theEngineHandlersBenchClicksEveryPulseLogsEveryEdgeAndAllocatesNothingOnTheHotThread() throws {
        guard let json = try bench(["--clicks", "5", "--storm", "2000", "--no-realtime"]) else { return }
        #expect(json["path"] as? String == "engine-handler, trainer's clicker")
        // Clicks counted from the log the feeder wrote: one for each measured pulse.
        #expect(json["n"] as? Int == 5)
        #expect(json["pulses"] as? Int == 5)
        #expect(json["clicks_played"] as? Int == 5, "the hot loop's own count agrees")
        #expect(json["failed_clicks"] as? Int == 0)
        // The hot thread checked the clicks' streams after them (under the allocation count), and
        // found each played.
        #expect((json["stream_checks"] as? Int ?? 0) > 0)
        #expect(json["sound_faults"] as? Int == 0)
        let read = try #require(json["edges_read"] as? Int)
        #expect(read > 2 * 25, "the storm and the clicker's pulses (warm-up included) were read")
        #expect(json["edges_logged"] as? Int == read, "every edge read is in the log")
        #expect(json["dropped"] as? Int == 0)
        // CI's figure: a count on the whole path, never a time.
        #expect(json["hot_thread_allocations"] as? Int == 0, "\(json["hot_thread_allocations"] ?? "missing")")
        #expect(json["p99_us"] is Double && json["p50_us"] is Double)
    }

    /// With a feeder on the board: every click (warm-up included) pulses its line and is
    /// logged, and the hot thread still allocates nothing.
    @Test func withTheFeederOnEveryClickFeedsAndTheHotThreadStillAllocatesNothing() throws {
        guard let json = try bench(["--clicks", "5", "--storm", "2000", "--no-realtime", "--feeder", "2,5"]) else {
            return
        }
        #expect(json["n"] as? Int == 5)
        let played = try #require(json["clicks_played"] as? Int)
        // `clicks_played` leaves out the warm-up's clicks; the feeder's line saw them all.
        let pulses = try #require(json["feeder_pulses"] as? Int)
        #expect(pulses > played && pulses == json["feeder_logged"] as? Int, "\(json)")
        #expect(json["hot_thread_allocations"] as? Int == 0, "\(json["hot_thread_allocations"] ?? "missing")")
    }

    @Test func theFixedHandlerStaysForComparisonAndSaysSo() throws {
        guard let json = try bench(["--handler", "fixed", "--clicks", "5", "--storm", "2000", "--no-realtime"])
        else { return }
        #expect(json["path"] as? String == "fixed handler, a station's edge")
        #expect(json["n"] as? Int == 5)
        #expect(json["hot_thread_allocations"] as? Int == 0)
    }
}
