import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LineupBench
import NIOCore
import SessionLog
import StationWeb
import Synchronization
import Testing
import TrainingEngine

/// The researcher's screens' routes: exports streamed as `lineupctl export` writes them, and
/// the sample list while a double-blind session runs.
@Suite struct ResearchScreensTests {
    /// `lineupctl export`'s standard output, as bytes; run and waited for on a thread of its own
    /// (`onThread`), not on Swift's pool, which the in-process pages under test need.
    func lineupctlExport(_ db: String, _ what: ExportTable, _ format: ExportFormat, _ more: [String] = [])
        async throws -> Data
    {
        let (status, data) = try await onThread { try Self.export(db, what, format, more) }
        #expect(status == 0, "lineupctl export --what \(what.rawValue) failed")
        return data
    }

    static func export(_ db: String, _ what: ExportTable, _ format: ExportFormat, _ more: [String]) throws -> (
        Int32, Data
    ) {
        let process = Process()
        process.executableURL = packageRoot.appendingPathComponent(".build/debug/lineupctl")
        process.arguments = ["export", "--db", db, "--what", what.rawValue, "--format", format.rawValue] + more
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, data)
    }

    @Test func thePagesDownloadIsLineupctlExportsOutputByteForByte() async throws {
        let log = try ScreensTests.filledLog()
        let state = WebState(users: try makeUsers(), link: AddingLink(), logPath: log.path)
        try await Application(router: WebApp.router(state: state)).test(.router) { client in
            let page = try #require(try await client.login("researcher1").1)
            for what in ExportTable.allCases {
                for format in ExportFormat.allCases {
                    let uri = "/api/export?what=\(what.rawValue)&format=\(format.rawValue)"
                    let response = try await client.execute(uri: uri, method: .get, headers: page.getHeaders)
                    #expect(response.status == .ok, "\(uri): \(text(response.body))")
                    #expect(
                        response.headers[.contentDisposition]
                            == "attachment; filename=\"\(what.rawValue).\(format.rawValue)\"")
                    let expected = try await lineupctlExport(log.path, what, format)
                    // CSV has its header row even with no rows (JSON Lines of no milestones is empty).
                    if format == .csv { #expect(!expected.isEmpty) }
                    #expect(Data(buffer: response.body) == expected, "\(uri) differs from lineupctl export's bytes")
                }
            }
        }
    }

    /// One dog's or one session's rows, as the dog's and the session's pages link them: the
    /// bytes of `lineupctl export --dog/--session`; a dog the log does not know is one error.
    @Test func oneDogsAndOneSessionsExportsAreLineupctlsBytes() async throws {
        let log = try ScreensTests.filledLog()
        let (dog, session) = try log.reader.read { db in
            let dog = try String.fetchOne(db, sql: "SELECT name FROM dog ORDER BY name DESC LIMIT 1") ?? ""
            let session = try String.fetchOne(db, sql: "SELECT id FROM session ORDER BY id LIMIT 1") ?? ""
            return (dog, session)
        }
        let state = WebState(users: try makeUsers(), link: AddingLink(), logPath: log.path)
        try await Application(router: WebApp.router(state: state)).test(.router) { client in
            let page = try #require(try await client.login("researcher1").1)
            let whole = try await lineupctlExport(log.path, .trials, .csv)
            for (query, option, value) in [("dog", "--dog", dog), ("session", "--session", String(session.prefix(8)))] {
                let uri = "/api/export?what=trials&format=csv&\(query)=\(value)"
                let response = try await client.execute(uri: uri, method: .get, headers: page.getHeaders)
                #expect(response.status == .ok, "\(uri): \(text(response.body))")
                #expect(
                    response.headers[.contentDisposition]
                        == "attachment; filename=\"trials-\(WebApp.fileNamePart(value)).csv\"")
                let expected = try await lineupctlExport(log.path, .trials, .csv, [option, value])
                #expect(
                    Data(buffer: response.body) == expected, "\(uri) differs from lineupctl export \(option)'s bytes")
                // Narrower than the whole log, so the choice was applied.
                #expect(expected.count < whole.count)
            }
            let unknown = try await client.execute(
                uri: "/api/export?what=trials&format=csv&dog=Nobody", method: .get, headers: page.getHeaders)
            #expect(unknown.status == .notFound)
            #expect(text(unknown.body).contains("Nobody"), "\(text(unknown.body))")
        }
    }

    /// A slow connection holds the export back: it never runs more than `exportChunksAhead`
    /// chunks ahead of what was written, and the chunks together are the export's bytes.
    @Test func anExportWaitsForTheConnection() async throws {
        let log = try ScreensTests.filledLog()
        let reader = log.reader
        let produced = Mutex(0)
        var written = 0
        var ahead = 0
        var bytes = Data()
        try await WebApp.streamExport(
            reader, .events, .csv, chunkSize: 512, produced: { n in produced.withLock { $0 = n } }
        ) { chunk in
            // A slow writer: the producer thread gets every chance to run ahead.
            for _ in 0..<50 { await Task.yield() }
            ahead = max(ahead, produced.withLock { $0 } - written)
            bytes.append(contentsOf: chunk.readableBytesView)
            written += 1
        }
        #expect(written > 20, "the export came in \(written) chunk(s): too small a log to show the wait")
        #expect(ahead <= WebApp.exportChunksAhead, "the export ran \(ahead) chunks ahead of the connection")
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("export-\(UUID().uuidString)").path
        let fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0o600)
        defer {
            close(fd)
            unlink(path)
        }
        try reader.export(.events, format: .csv, to: ByteSink(fd: fd))
        #expect(bytes == FileManager.default.contents(atPath: path))
    }

    /// The list's use counts grow trial by trial: while a double-blind session is open in the
    /// log they are withheld, with why, and the list answers; once it ends they are back.
    @Test func theSampleListHasNoUseCountsWhileADoubleBlindSessionRuns() async throws {
        let log = try ScreensTests.filledLog()
        let reader = log.reader
        let state = WebState(users: try makeUsers(), link: AddingLink(), logPath: log.path)
        try await Application(router: WebApp.router(state: state)).test(.router) { client in
            let page = try #require(try await client.login("trainer1").1)
            let before = try await client.execute(uri: "/api/samples", method: .get, headers: page.getHeaders)
            #expect(text(before.body) == (try ScreensTests.json(try reader.samples())))
            #expect(text(before.body).contains(#""uses":"#))

            // Running: a lineupd holds the log's lock (the reader's rule, LiveDoubleBlind).
            let lock = try LogLock(logPath: log.path)
            defer { withExtendedLifetime(lock) {} }
            let running = SessionRecord(dogId: UUID(uuidString: try reader.resolveDog("Aino"))!, mode: .doubleBlind)
            try log.append([running])
            for uri in ["/api/samples", "/api/samples?kind=target"] {
                let during = try await client.execute(uri: uri, method: .get, headers: page.getHeaders)
                #expect(during.status == .ok, "\(uri)")
                let list = try #require(
                    try JSONSerialization.jsonObject(with: Data(buffer: during.body)) as? [[String: Any]])
                #expect(!list.isEmpty)
                for sample in list {
                    #expect(sample["uses"] == nil, "\(uri) sent \(sample["label"] ?? "?")'s use count")
                    #expect(sample["label"] is String)
                    #expect((sample["usesWithheld"] as? String)?.contains("double-blind session is running") == true)
                    // Its facts as the listing has them: flat, not under a key of their own.
                    #expect(sample["processing"] as? String == "frozen -20 C" && sample["facts"] == nil)
                }
            }

            try log.append([SessionEnd(sessionId: running.id, how: .ended, detail: "ended by the trainer")])
            let after = try await client.execute(uri: "/api/samples", method: .get, headers: page.getHeaders)
            #expect(text(after.body) == (try ScreensTests.json(try reader.samples())))
        }
    }
}
