import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import StationControl
import StationWeb
import Testing
import WebAccounts

/// The Health screen's live levels come from /api/status: a nose put at a station of a real
/// simulated lineupd reads active there (for any account, the researcher's too), then clear.
@Suite(.serialized) struct HealthLevelsTests {
    @Test func apiStatusCarriesEachInputsLevel() async throws {
        guard let station = try SimulatedStation() else { return }
        defer { station.terminate() }
        #expect(await station.waitReady())
        let link = SocketLink(path: station.socket)
        let state = WebState(users: try makeUsers(), link: link)
        try await Application(router: WebApp.router(state: state)).test(.router) { client in
            let page = try #require(try await client.login("researcher1").1)
            func levels() async throws -> [InputLevel] {
                let r = try await client.execute(uri: "/api/status", method: .get, headers: page.getHeaders)
                #expect(r.status == .ok, "\(text(r.body))")
                return try JSONDecoder().decode(StationStatus.self, from: Data(buffer: r.body)).inputLevels ?? []
            }
            let before = try await levels()
            #expect(before.map(\.input) == ["A", "B", "C", "D", "E", "clicker", "error", "ready"], "\(before)")
            #expect(before.allSatisfy { !$0.active && $0.secondsSinceChange >= 0 && !$0.changedAt.isEmpty })
            try station.client.simulate(SimulatedInput(input: "B", active: true))
            var active: [InputLevel] = []
            for _ in 0..<200 {
                active = try await levels()
                if active.contains(where: { $0.input == "B" && $0.active }) { break }
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(active.filter(\.active).map(\.input) == ["B"], "\(active)")
            try station.client.simulate(SimulatedInput(input: "B", active: false))
            var clear: [InputLevel] = []
            for _ in 0..<200 {
                clear = try await levels()
                if !clear.contains(where: \.active) { break }
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(clear.filter(\.active).isEmpty, "\(clear)")
            // The Health screen's own route carries the same status.
            let health = try await client.execute(uri: "/api/health", method: .get, headers: page.getHeaders)
            #expect(text(health.body).contains(#""inputLevels":[{"#), "\(text(health.body))")
        }
    }
}
