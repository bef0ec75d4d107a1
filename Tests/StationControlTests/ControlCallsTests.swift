import Foundation
import StationControl
import Testing
import TrainingEngine

@Suite("Control calls: one table, the wire as before")
struct ControlCallsTests {
    /// Each request as the enum-based encoder of the protocol's first version wrote it
    /// (captured from that code before the table replaced it): the table must not move a byte.
    static var wire: [(any ControlCall, String)] {
        var timedSession = SessionRequest(dog: "Rex", program: "p", step: "s")
        timedSession.durationSeconds = 12.5
        timedSession.stations = ["north", "3"]
        return [
            (
                StatusRequest(),
                #"{"id":1,"request":"status","v":1}"#
            ),
            (
                SessionRequest(
                    dog: "Rex", program: "study", step: "discriminate/2", exercise: "1", mode: .doubleBlind, trials: 20,
                    samples: ["T-7", "C-2"], handler: "Anna", seed: 42, layouts: [[.target, .blank, .control]],
                    newDog: true,
                    unlabelled: false),
                #"{"dog":"Rex","exercise":"1","handler":"Anna","id":2,"layouts":[["target","blank","control"]],"mode":"double-blind","newDog":true,"program":"study","request":"session-start","samples":["T-7","C-2"],"seed":42,"step":"discriminate/2","trials":20,"unlabelled":false,"v":1}"#
            ),
            (
                SessionRequest(dog: "Rex", program: "study", step: "a/1"),
                #"{"dog":"Rex","id":3,"program":"study","request":"session-start","samples":[],"step":"a/1","v":1}"#
            ),
            (
                LayoutRequest(view: .assistant),
                #"{"id":4,"request":"layout","v":1,"view":"assistant"}"#
            ),
            (
                LayoutRequest(view: .handler),
                #"{"id":5,"request":"layout","v":1,"view":"handler"}"#
            ),
            (
                ReadyRequest(),
                #"{"id":6,"request":"ready","v":1}"#
            ),
            (
                AbortRequest(),
                #"{"id":7,"request":"abort","v":1}"#
            ),
            (
                SessionEndRequest(suggestions: "shorter \"holds\"/ü"),
                #"{"id":8,"request":"session-end","suggestions":"shorter \"holds\"/ü","v":1}"#
            ),
            (
                SessionEndRequest(suggestions: nil),
                #"{"id":9,"request":"session-end","v":1}"#
            ),
            (
                WatchRequest(),
                #"{"id":10,"request":"watch","v":1}"#
            ),
            (
                DogEntry(name: "Aino", born: "2021-04-02", notes: "shy"),
                #"{"born":"2021-04-02","id":11,"name":"Aino","notes":"shy","request":"dog-add","v":1}"#
            ),
            (
                DogEntry(name: "Cara"),
                #"{"id":12,"name":"Cara","request":"dog-add","v":1}"#
            ),
            (
                SampleEntry(
                    label: "T-42", kind: .target,
                    facts: SampleFacts(
                        diagnosis: "lung", source: "clinic A", collection: "breath", processing: "frozen",
                        collectedOn: "2025-01-10")),
                #"{"collectedOn":"2025-01-10","collection":"breath","diagnosis":"lung","id":13,"kind":"target","label":"T-42","processing":"frozen","request":"sample-add","source":"clinic A","v":1}"#
            ),
            (
                SampleNoteEntry(sample: "T-42", text: "lid"),
                #"{"id":14,"request":"sample-note","sample":"T-42","text":"lid","v":1}"#
            ),
            (
                TrialCorrectionEntry(trial: "9b1c", outcome: .falseAlert, indicated: 3, reason: "video"),
                #"{"id":15,"indicated":3,"outcome":"false-alert","reason":"video","request":"trial-correct","trial":"9b1c","v":1}"#
            ),
            (
                SessionNoteEntry(session: "3f2a", text: "rain"),
                #"{"id":16,"request":"session-note","session":"3f2a","text":"rain","v":1}"#
            ),
            (
                SimulatedInput(input: "2", active: true),
                #"{"active":true,"id":17,"input":"2","request":"simulate","v":1}"#
            ),
            (
                AboutRequest(),
                #"{"id":18,"request":"about","v":1}"#
            ),
            (
                timedSession,
                #"{"dog":"Rex","durationSeconds":12.5,"id":19,"program":"p","request":"session-start","samples":[],"stations":["north","3"],"step":"s","v":1}"#
            ),
        ]
    }

    @Test("every request is encoded byte for byte as before, and decodes back to itself")
    func wireUnchanged() throws {
        for (index, (call, line)) in Self.wire.enumerated() {
            let encoded = ControlProtocol.encode(call, id: index + 1)
            #expect(String(decoding: encoded, as: UTF8.self) == line + "\n")
            let decoded = try ControlProtocol.decodeRequest(Data(line.utf8)).get()
            #expect(decoded.id == index + 1)
            #expect(decoded.call.isSame(as: call), "\(line)")
        }
    }

    /// Requests added since, each pinned as it was designed.
    static let added: [(any ControlCall, String)] = [
        (VersionRequest(), #"{"id":1,"request":"version","v":1}"#),
        (ButtonPress(button: "clicker"), #"{"button":"clicker","id":1,"request":"press","v":1}"#),
        (
            DogNoteEntry(dog: "Aino", text: "calmer now"),
            #"{"dog":"Aino","id":1,"request":"dog-note","text":"calmer now","v":1}"#
        ),
        (GuessEntry(station: "C"), #"{"id":1,"request":"guess","station":"C","v":1}"#),
        (
            SyncReportEntry(
                complete: false, behindRows: 12, oldestUnsyncedWallNs: 5, sentRows: 3, error: "lost",
                endedWallNs: 9),
            #"{"behindRows":12,"complete":false,"endedWallNs":9,"error":"lost","id":1,"oldestUnsyncedWallNs":5,"request":"sync-report","sentRows":3,"v":1}"#
        ),
        (
            RegistryAddition(
                dogs: [RegistryDog(id: "0b2f8e4c-1d3a-4f5e-9a6b-7c8d9e0f1a2b", name: "Bella", born: "2021-04-02")],
                samples: [
                    RegistrySample(id: "5d1c0e2b-3a4f-4b6c-8d7e-9f0a1b2c3d4e", label: "T-7", kind: .target, maxUses: 20)
                ]),
            #"{"dogs":[{"born":"2021-04-02","id":"0b2f8e4c-1d3a-4f5e-9a6b-7c8d9e0f1a2b","name":"Bella"}],"id":1,"request":"registry-add","samples":[{"id":"5d1c0e2b-3a4f-4b6c-8d7e-9f0a1b2c3d4e","kind":"target","label":"T-7","maxUses":20}],"v":1}"#
        ),
        (
            RegistryAddition(
                dogs: [RegistryDog(id: "0b2f8e4c-1d3a-4f5e-9a6b-7c8d9e0f1a2b", name: "Bella")], labUsesFollow: true),
            #"{"dogs":[{"id":"0b2f8e4c-1d3a-4f5e-9a6b-7c8d9e0f1a2b","name":"Bella"}],"id":1,"labUsesFollow":true,"request":"registry-add","samples":[],"v":1}"#
        ),
        (
            RegistryUses(
                asOfWallNs: 1_795_000_000_000_000_000,
                samples: [
                    RegistrySampleUses(
                        sample: "5d1c0e2b-3a4f-4b6c-8d7e-9f0a1b2c3d4e", uses: 6,
                        dogs: [RegistryDogUses(dog: "0b2f8e4c-1d3a-4f5e-9a6b-7c8d9e0f1a2b", trials: 3)])
                ]),
            #"{"asOfWallNs":1795000000000000000,"id":1,"request":"registry-uses","samples":[{"dogs":[{"dog":"0b2f8e4c-1d3a-4f5e-9a6b-7c8d9e0f1a2b","trials":3}],"sample":"5d1c0e2b-3a4f-4b6c-8d7e-9f0a1b2c3d4e","uses":6}],"v":1}"#
        ),
        (SessionResumeRequest(), #"{"id":1,"request":"session-resume","v":1}"#),
        (
            DilutionEntry(
                stock: "T-1",
                dilutions: [
                    .init(label: "T-1/1e1", factor: 10), .init(label: "T-1/ppb", concentration: 2.5, unit: "ppb"),
                ], diluent: "mineral oil", madeBy: "R7", maxUsesPerDog: 8),
            #"{"diluent":"mineral oil","dilutions":[{"factor":10,"label":"T-1/1e1"},{"concentration":2.5,"label":"T-1/ppb","unit":"ppb"}],"id":1,"madeBy":"R7","maxUsesPerDog":8,"request":"dilution-add","stock":"T-1","v":1}"#
        ),
    ]

    @Test("a request added to the table has its line, and decodes back to itself")
    func addedWire() throws {
        for (call, line) in Self.added {
            #expect(String(decoding: ControlProtocol.encode(call, id: 1), as: UTF8.self) == line + "\n")
            #expect(try ControlProtocol.decodeRequest(Data(line.utf8)).get().call.isSame(as: call))
        }
    }

    @Test("version crosses the socket: the station's answer comes back whole")
    func versionRoundTrip() throws {
        let (server, station, client) = try makeServer("version")
        defer { server.stop() }
        #expect(
            try client.send(VersionRequest())
                == StationVersion(protocolVersion: 1, libgpiod: "2.1.3 (v2 API)", alsaLib: "1.2.8"))
        #expect(station.calls == ["version"])
    }

    @Test("the table names every request once, and the wire's old ones in their old order")
    func tableNames() {
        let names = ControlCalls.names
        #expect(Set(names).count == names.count)
        #expect(
            Array(names.prefix(14)) == [
                "status", "session-start", "layout", "ready", "abort", "session-end", "watch", "dog-add",
                "sample-add", "sample-note", "trial-correct", "session-note", "simulate", "about",
            ])
        #expect(Set((Self.wire + Self.added).map { type(of: $0.0).name }) == Set(names))
    }

    @Test("an unknown request is refused with every name the table holds")
    func unknownListsTable() throws {
        let failure = try #require(
            ControlProtocol.decodeRequest(Data(#"{"v":1,"id":4,"request":"fetch"}"#.utf8)).failureValue)
        #expect(failure.id == 4)
        #expect(failure.refusal.code == .unknownRequest)
        #expect(
            failure.refusal.message == "unknown request 'fetch'; known: \(ControlCalls.names.joined(separator: ", "))")
    }
}

extension ControlCall {
    /// Equal to another call of any type: the same type and the same fields.
    func isSame(as other: any ControlCall) -> Bool {
        (other as? Self) == self
    }
}

extension Result {
    var failureValue: Failure? {
        if case .failure(let f) = self { return f }
        return nil
    }
}
