import Foundation
import Testing

@testable import StationControl

/// `dog-note` on the real socket: the dog and the text reach the station whole, its id comes
/// back, a refusal comes back with the station's words, and a line without text is refused
/// before the station is asked.
@Suite struct DogNoteRequestTests {
    @Test func aDogsNotesCrossTheSocket() throws {
        let (server, station, client) = try makeServer("dognote")
        defer { server.stop() }
        #expect(try client.noteDog(DogNoteEntry(dog: "Aino", text: "calmer, \"steady\" now")) == "DN1")
        #expect(
            throws: ControlClientError.refused(ControlRefusal(.unknown, "no dog \"Nobody\" in the log"))
        ) { try client.noteDog(DogNoteEntry(dog: "Nobody", text: "hello")) }
        #expect(station.calls == ["noteDog Aino calmer, \"steady\" now", "noteDog Nobody hello"])

        let missing = try #require(
            ControlProtocol.decodeRequest(Data(#"{"v":1,"id":3,"request":"dog-note","dog":"Aino"}"#.utf8))
                .failureValue)
        #expect(missing.refusal.code == .badRequest)
        #expect(missing.refusal.message.contains("'text'"), "\(missing.refusal.message)")
    }
}
