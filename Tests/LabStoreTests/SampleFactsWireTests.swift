import Foundation
import LabLink
import SessionLog
import StationControl
import Testing
import TrainingEngine

/// Every type that carries a sample's facts embeds SampleFacts and encodes it flat (issue 34):
/// the bytes below are those each type wrote when it declared the facts itself, so the socket,
/// the lab link, `--json` and the page read the same keys. Each is decoded, checked and encoded
/// back, plain and in lineupctl's snake case.
@Suite struct SampleFactsWireTests {
    static let facts = SampleFacts(
        diagnosis: "lung", source: "clinic A", collection: "breath", processing: "frozen", collectedOn: "2025-01-10")

    /// Decodes `json` as `T`, finds `facts` in it, and encodes it back to the same bytes.
    func roundTrip<T: Codable & Equatable>(
        _ type: T.Type, _ json: String, facts: (T) -> SampleFacts, snakeCase: String? = nil
    ) throws {
        let value = try JSONDecoder().decode(T.self, from: Data(json.utf8))
        #expect(facts(value) == Self.facts, "\(T.self): its facts decoded")
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        #expect(String(decoding: try encoder.encode(value), as: UTF8.self) == json, "\(T.self)")
        if let snakeCase {
            encoder.keyEncodingStrategy = .convertToSnakeCase
            #expect(String(decoding: try encoder.encode(value), as: UTF8.self) == snakeCase, "\(T.self), snake case")
        }
    }

    @Test func theSocketsSampleAddSendsTheFactsFlat() throws {
        try roundTrip(
            SampleEntry.self,
            #"{"collectedOn":"2025-01-10","collection":"breath","diagnosis":"lung","kind":"target","label":"T-1","maxUses":3,"processing":"frozen","source":"clinic A"}"#,
            facts: \.facts)
    }

    @Test func theRegistrysSampleSendsTheFactsFlat() throws {
        try roundTrip(
            RegistrySample.self,
            #"{"collectedOn":"2025-01-10","collection":"breath","diagnosis":"lung","dilutionFactor":10,"id":"s1","kind":"target","label":"T-1","maxUsesPerDog":2,"processing":"frozen","source":"clinic A","stockId":"s0"}"#,
            facts: \.facts)
    }

    @Test func theLabsSampleCarriesTheFactsFlat() throws {
        try roundTrip(
            LabSample.self,
            #"{"collectedOn":"2025-01-10","collection":"breath","diagnosis":"lung","id":"s1","kind":"target","label":"T-1","maxUses":4,"processing":"frozen","source":"clinic A","stationId":"st","stationsUsed":1,"uses":5}"#,
            facts: \.facts,
            snakeCase:
                #"{"collected_on":"2025-01-10","collection":"breath","diagnosis":"lung","id":"s1","kind":"target","label":"T-1","max_uses":4,"processing":"frozen","source":"clinic A","station_id":"st","stations_used":1,"uses":5}"#
        )
    }

    @Test func theLogsListedSampleCarriesTheFactsFlat() throws {
        try roundTrip(
            SampleSummary.self,
            #"{"added":"2025-01-11T09:00:00Z","collectedOn":"2025-01-10","collection":"breath","diagnosis":"lung","id":"s1","kind":"target","label":"T-1","notes":0,"processing":"frozen","source":"clinic A","uses":2}"#,
            facts: \.facts,
            snakeCase:
                #"{"added":"2025-01-11T09:00:00Z","collected_on":"2025-01-10","collection":"breath","diagnosis":"lung","id":"s1","kind":"target","label":"T-1","notes":0,"processing":"frozen","source":"clinic A","uses":2}"#
        )
    }

    /// A sample with no facts writes none of their keys (not `null`), as before.
    @Test func noFactsWriteNoKeys() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        #expect(
            String(decoding: try encoder.encode(SampleEntry(label: "B", kind: .blank)), as: UTF8.self)
                == #"{"kind":"blank","label":"B"}"#)
    }
}
