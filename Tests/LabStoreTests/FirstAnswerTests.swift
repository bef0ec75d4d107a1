import Testing

@testable import LabStore

/// The deadline's timer closes the connection only when it was the first answer. It once
/// closed it whenever it woke: a statement answered as the timer woke (a loaded CI machine, a
/// 1 s deadline) left the connection closing, and the next statement failed with
/// "clientClosedConnection" (LabStreamTests, CI at 4eff6fd).
@Suite(.ownThreads) struct FirstAnswerTests {
    @Test func aFailureAfterTheAnswerIsDroppedAndSaysSo() async throws {
        let gate = FirstAnswer<Int>()
        let value = try await withCheckedThrowingContinuation { continuation in
            gate.start(continuation)
            Task {
                await gate.finish { 7 }
                // The timer wakes after the answer: its failure is not the answer, so it must
                // not close the connection.
                #expect(gate.fail(LabStoreError.unreachable(store: "s", reason: "late")) == false)
            }
        }
        #expect(value == 7)
    }

    @Test func aFailureFirstIsTheAnswer() async throws {
        let gate = FirstAnswer<Int>()
        await #expect(throws: LabStoreError.self) {
            _ = try await withCheckedThrowingContinuation { continuation in
                gate.start(continuation)
                #expect(gate.fail(LabStoreError.unreachable(store: "s", reason: "deadline")))
            }
        }
    }

    /// The stream's watch: whichever of the stream's end and the watch's giving up comes
    /// first stands, and the other learns it.
    @Test func aStreamEndsOrIsGivenUpOnce() {
        let ended = StreamWatch()
        #expect(ended.end())
        #expect(!ended.giveUp())
        #expect(!ended.wasGivenUp)
        let given = StreamWatch()
        #expect(given.giveUp())
        #expect(!given.end())
        #expect(given.wasGivenUp)
    }
}
