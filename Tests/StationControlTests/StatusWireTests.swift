import Foundation
import StationControl
import Testing
import TrainingEngine

/// `status`'s state and its flagged stations' faults are typed now; a client reads the same
/// bytes as before (the reply below was captured from the string-typed code).
@Suite("Status on the wire: typed state and faults, the same bytes")
struct StatusWireTests {
    static func sample() -> StationStatus {
        var status = StationStatus(
            state: .searching, session: "S1", dog: "Rex", mode: .doubleBlind, trial: 3, trials: 20,
            step: "discriminate/2", audio: "ok", gpio: "simulated", clicks: 4, edges: 12, uptimeSeconds: 61.5)
        status.flaggedStations = [
            FlaggedStation(station: "A", fault: .activeAtStart), FlaggedStation(station: "B", fault: .stuck),
            FlaggedStation(station: "C", fault: .silent), FlaggedStation(station: "D", fault: .chatter),
            FlaggedStation(station: "E", fault: .unreadable),
        ]
        status.sensorFaults = ["stuck": 1]
        return status
    }

    static let captured =
        #"{"id":7,"ok":true,"result":{"audio":"ok","clicks":4,"dog":"Rex","droppedEdges":0,"edges":12,"failedClicks":0,"flaggedStations":[{"fault":"active-at-start","station":"A"},{"fault":"stuck","station":"B"},{"fault":"silent","station":"C"},{"fault":"chatter","station":"D"},{"fault":"unreadable","station":"E"}],"gpio":"simulated","logOverflow":0,"mode":"double-blind","sensorFaults":{"stuck":1},"session":"S1","state":"searching","step":"discriminate/2","trial":3,"trials":20,"uptimeSeconds":61.5},"v":1}"#
        + "\n"

    @Test func theReplyIsByteForByteAsBefore() {
        #expect(
            String(decoding: ControlProtocol.encodeReply(id: 7, result: Self.sample()), as: UTF8.self) == Self.captured)
    }

    /// Every state and every fault spells its word on the wire and reads back as itself.
    @Test func everyStateAndFaultRoundTrips() throws {
        for state in StationState.allCases {
            for fault in StationFault.allCases {
                var status = Self.sample()
                status.state = state
                status.flaggedStations = [FlaggedStation(station: "A", fault: fault)]
                let data = try JSONEncoder().encode(status)
                let text = String(decoding: data, as: UTF8.self)
                #expect(
                    text.contains(#""state":"\#(state.rawValue)""#) && text.contains(#""fault":"\#(fault.rawValue)""#))
                #expect(try JSONDecoder().decode(StationStatus.self, from: data) == status)
            }
        }
    }

    @Test func theEnginesSensorFaultsKeepTheirWords() {
        for fault in [SensorFault.activeAtStart, .stuck, .silent, .chatter] {
            #expect(StationFault(fault).rawValue == fault.rawValue)
        }
    }
}
