import Testing
import TrainingEngine

/// A sample's facts by name: the subscript, the columns and options derived from the names.
@Suite struct SampleFactsTests {
    @Test func eachFactIsReadAndWrittenByName() {
        var facts = SampleFacts()
        for fact in SampleFacts.Fact.allCases { facts[fact] = "v-" + fact.rawValue }
        #expect(
            facts
                == SampleFacts(
                    diagnosis: "v-diagnosis", source: "v-source", collection: "v-collection",
                    processing: "v-processing", collectedOn: "v-collectedOn"))
        #expect(facts.given.map(\.fact) == SampleFacts.Fact.allCases)
        #expect(SampleFacts(processing: "frozen").given.map(\.value) == ["frozen"])
    }

    @Test func theColumnsAndOptionsAreTheSchemasAndLineupctls() {
        #expect(
            SampleFacts.Fact.allCases.map(\.column) == [
                "diagnosis", "source", "collection", "processing", "collected_on",
            ])
        #expect(
            SampleFacts.Fact.allCases.map(\.option)
                == ["--diagnosis", "--source", "--collection", "--processing", "--collected-on"])
        let read = SampleFacts { $0 == "collected_on" ? "2025-01-10" : nil }
        #expect(read == SampleFacts(collectedOn: "2025-01-10"))
        #expect(read.columns.map(\.column) == SampleFacts.Fact.allCases.map(\.column))
    }
}
