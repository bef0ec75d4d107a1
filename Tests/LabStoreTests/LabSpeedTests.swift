import Foundation
import LabStore
import PostgresNIO
import Testing

/// The store's reading of the trials after corrections stays one pass over the trials, however
/// many there are: the corrections are hashed once, in one batch (LabSchema+Speed.swift).
@Suite(.serialized, .ownThreads) struct LabSpeedTests {
    @Test func theCorrectionsAreHashedAsTheFewTheyAre() async throws {
        guard let server = try await TestServer.startOrSkip("theCorrectionsAreHashedAsTheFewTheyAre") else { return }
        let lab = try await server.makeLab()
        try await LabStreamTests().fill(lab, trials: 5_000)
        let owner = try await LabStore.connect(lab.owner)
        let plan: String
        do {
            try await owner.execute("ANALYZE store.trial")
            let rows = try await owner.rows("EXPLAIN (FORMAT JSON) SELECT * FROM store.trial_current")
            plan = try rows[0].decode(String.self)
        } catch {
            await owner.close()
            throw error
        }
        await owner.close()
        // The hash of the corrections is sized by what the statistics say (none here), not by
        // the 5,000 trials: the v2 view expected them all and, at a million, split into batches.
        let json = try JSONSerialization.jsonObject(with: Data(plan.utf8))
        let hashed = nodes(json).filter { $0["Node Type"] as? String == "Hash" }
        #expect(hashed.count == 1, "\(plan)")
        let expected = hashed.first?["Plan Rows"] as? Int ?? -1
        #expect((0..<10).contains(expected), "the corrections' hash expects \(expected) rows: \(plan)")
    }

    /// Every node of an EXPLAIN (FORMAT JSON) plan.
    func nodes(_ value: Any) -> [[String: Any]] {
        if let list = value as? [Any] { return list.flatMap(nodes) }
        guard let node = value as? [String: Any] else { return [] }
        var found = node["Node Type"] != nil ? [node] : []
        if let plan = node["Plan"] { found += nodes(plan) }
        if let plans = node["Plans"] { found += nodes(plans) }
        return found
    }
}
