import Foundation
import StationControl
import Testing
import TrainingEngine

#if canImport(Glibc)
    import Glibc
#endif

@Suite("Control protocol: bad input")
struct ProtocolFuzzTests {
    /// Sends one line on its own connection and returns every line the server sends back.
    private func exchange(_ path: String, _ bytes: [UInt8]) throws -> [String] {
        let raw = try #require(RawConnection(path: path))
        raw.send(bytes)
        raw.shutdownWriting()
        return raw.readAll()
    }

    @Test("each kind of bad request gets its error, with the id when it could be read")
    func namedErrors() throws {
        let (server, station, client) = try makeServer("errors")
        defer { server.stop() }
        let cases: [(String, String, String?)] = [
            (#"{"v":2,"id":7,"request":"status"}"#, "bad-version", "version 2"),
            (#"{"v":2,"id":7,"command":"status"}"#, "bad-version", "speaks version 1"),
            (#"{"v":1,"id":8,"request":"fetch"}"#, "unknown-request", "fetch"),
            (#"{"v":1,"id":9}"#, "bad-request", "'request'"),
            (#"{"id":10,"request":"status"}"#, "bad-request", "'v'"),
            (#"{"v":"1","id":11,"request":"status"}"#, "bad-request", "'v'"),
            (
                #"{"v":1,"id":12,"request":"session-start","dog":5,"program":"study","step":"a/1","mode":"automated"}"#,
                "bad-request", "'dog'"
            ),
            (
                #"{"v":1,"id":13,"request":"session-start","dog":"Rex","program":"study","step":"a/1","mode":"blind"}"#,
                "bad-request", "'mode'"
            ),
            (
                #"{"v":1,"id":14,"request":"session-start","dog":"Rex","program":"study","step":"a/1","mode":"solo"}"#,
                "bad-request", "'mode'"
            ),
            (
                #"{"v":1,"id":15,"request":"session-start","dog":"R","program":"p","step":"s","mode":"automated","samples":[1]}"#,
                "bad-request", "'samples.0'"
            ),
            (#"{"v":1,"id":16,"request":"layout","view":"dog"}"#, "bad-request", "'view'"),
            (#"{"v":1,"id":17,"request":"session-end","suggestions":false}"#, "bad-request", "'suggestions'"),
            (#"{"v":1,"id":18,"request":"dog-add"}"#, "bad-request", "'name'"),
            (#"{"v":1,"id":19,"request":"sample-add","label":"T-1","kind":"cheese"}"#, "bad-request", "'kind'"),
            (#"{"v":1,"id":20,"request":"sample-note","sample":"T-1"}"#, "bad-request", "'text'"),
            (#"[1,2,3]"#, "bad-request", nil),
            (#"not json"#, "bad-request", nil),
        ]
        for (line, code, mention) in cases {
            let replies = try exchange(client.path, Array((line + "\n").utf8))
            #expect(replies.count == 1, "\(line)")
            let reply = json(replies.first)
            #expect(reply["v"] as? Int == 1)
            #expect(reply["ok"] as? Bool == false)
            #expect(errorCode(replies.first) == code, "\(line)")
            if let mention {
                let message = (reply["error"] as? [String: Any])?["message"] as? String ?? ""
                #expect(message.contains(mention), "\(line): \(message)")
            }
            if let id = (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["id"] as? Int {
                #expect(reply["id"] as? Int == id)
            }
        }
        #expect(station.calls.isEmpty)
        #expect(try client.status().state == .idle)
    }

    @Test("the wrong version's error names both versions")
    func versionMessage() throws {
        let failure = try #require(
            ControlProtocol.decodeRequest(Data(#"{"v":3,"id":1,"request":"status"}"#.utf8)).failure)
        #expect(failure.refusal.code == .badVersion)
        #expect(failure.refusal.message.contains("3"))
        #expect(failure.refusal.message.contains("\(ControlProtocol.version)"))
    }

    @Test("an oversize line gets an error and the connection closed")
    func oversizeLine() throws {
        let (server, station, client) = try makeServer("big")
        defer { server.stop() }
        var megabyte = Array(#"{"v":1,"id":1,"request":"status","pad":""#.utf8)
        megabyte += [UInt8](repeating: UInt8(ascii: "a"), count: 1 << 20)
        megabyte += Array("\"}\n".utf8)
        let replies = try exchange(client.path, megabyte)
        #expect(replies.count == 1)
        #expect(errorCode(replies.first) == "too-long")

        // Exactly at the limit is still a request.
        var atLimit = Array(#"{"v":1,"id":2,"request":"status","pad":""#.utf8)
        atLimit += [UInt8](repeating: UInt8(ascii: "b"), count: ControlProtocol.maxLineBytes - atLimit.count - 2)
        atLimit += Array("\"}".utf8)
        #expect(atLimit.count == ControlProtocol.maxLineBytes)
        let ok = try exchange(client.path, atLimit + [0x0A])
        #expect(json(ok.first)["ok"] as? Bool == true)
        #expect(station.calls == ["status"])
    }

    @Test("a few hundred random lines, vanishing clients and a stuck watcher leave the server answering")
    func fuzz() throws {
        let (server, station, client) = try makeServer("fuzz", maxQueuedBytes: 16 * 1024)
        defer { server.stop() }
        var rng = SplitMix(state: 0x5EED_11AE_0005)
        let fragments = [
            #"{"v":1,"id":1,"request":"#, #"{"v":1"#, #""request":"status""#, "\u{FF}\u{FE}", "{", "}", "[", "]",
            #""v":"#, "null", "true", "1e999", #"{"v":1,"id":"x","request":"ready"}"#,
            #"{"v":1,"id":1,"request":"session-start","dog":[]}"#, #"{"v":1,"id":1,"request":"layout","view":1}"#,
            #"{"v":1,"id":1,"request":"unknown"}"#, #"{"v":0,"id":1,"request":"abort"}"#, "\r", "\0",
        ]

        // A watcher that reads its first reply and then nothing at all.
        let stuck = try #require(RawConnection(path: client.path))
        stuck.send(#"{"v":1,"id":1,"request":"watch"}"# + "\n")
        #expect(json(stuck.readLine())["ok"] as? Bool == true)

        for round in 0..<300 {
            var bytes: [UInt8] = []
            switch round % 3 {
            case 0:  // random bytes, invalid UTF-8 included
                let count = Int.random(in: 0...2048, using: &rng)
                bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &rng) }
            case 1:  // JSON-ish pieces put together wrongly
                for _ in 0..<Int.random(in: 1...6, using: &rng) {
                    bytes += Array(fragments[Int.random(in: 0..<fragments.count, using: &rng)].utf8)
                }
            default:  // a random-length run of printable garbage
                let count = Int.random(in: 0...(8 * 1024), using: &rng)
                bytes = (0..<count).map { _ in UInt8.random(in: 32...126, using: &rng) }
            }
            let withNewline = Bool.random(using: &rng)
            if withNewline { bytes.append(0x0A) }
            let raw = try #require(RawConnection(path: client.path))
            raw.send(bytes)
            if Int.random(in: 0..<4, using: &rng) == 0 {
                raw.close()  // vanishes mid-request, without reading anything
                continue
            }
            raw.shutdownWriting()
            for reply in raw.readAll() {
                #expect(json(reply)["ok"] as? Bool == false, "round \(round): \(reply)")
            }
            // The stuck watcher is fed as the fuzz goes on, as the daemon's log would.
            station.emit(#"{"event":"fuzz","round":\#(round),"pad":""# + String(repeating: "y", count: 800) + "\"}")
        }
        // Keep feeding until the stuck watcher is cut off.
        var more = 0
        while more < 100_000, station.emit(#"{"event":"more"}"#) > 0 { more += 1 }
        #expect(eventually { station.unwatched.count == 1 })

        #expect(try client.status().state == .idle)
        #expect(station.calls == ["watch", "status"])
        stuck.close()
    }
}

extension Result {
    fileprivate var failure: Failure? {
        if case .failure(let f) = self { return f }
        return nil
    }
}
