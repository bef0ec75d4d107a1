import Foundation
import TestThreads
import Testing

/// `PipeText`, the tests' reader of a child's output (ServingStationTests' daemon, FullDiskTests'
/// block): what they rely on, text as it comes and an end once every writer is gone.
@Suite struct PipeTextTests {
    @Test func readsAsItComesAndEndsWhenTheWriterCloses() throws {
        let pipe = Pipe()
        let text = PipeText(pipe.fileHandleForReading)
        pipe.fileHandleForWriting.write(Data("block paused before trial 3\n".utf8))
        #expect(eventually(5) { text.text == "block paused before trial 3\n" }, "\(text.text)")
        #expect(!text.isAtEnd)
        #expect(!text.waitForEnd(seconds: 0.05), "no end while a writer is open")
        // A character whose bytes arrive in two reads is whole once both came.
        let accent = Array("é".utf8)
        pipe.fileHandleForWriting.write(Data(accent[..<1]))
        #expect(eventually(5) { text.text.utf8.count > "block paused before trial 3\n".utf8.count })
        pipe.fileHandleForWriting.write(Data(accent[1...]))
        try pipe.fileHandleForWriting.close()
        #expect(text.waitForEnd(seconds: 5))
        #expect(text.isAtEnd)
        #expect(text.text == "block paused before trial 3\né")
    }
}
