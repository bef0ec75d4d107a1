import Foundation
import Testing

@testable import SessionLog

/// The writer's queue holds up to 65,536 events (`SessionLog.makeWriter`), and under a storm every
/// page of it that fills stays resident in lineupd, locked: an event's size is the station's
/// memory. A click's timing is kept behind a reference so an event is 160 bytes, not 232; it still
/// reads, compares, hashes and codes as the value it was.
@Suite struct LoggedEventLayoutTests {
    @Test func anEventIsAtMost160Bytes() {
        #expect(MemoryLayout<LoggedEvent>.stride <= 160, "\(MemoryLayout<LoggedEvent>.stride) bytes")
    }

    @Test func aClickTimingKeepsItsValueSemanticsAndItsCodedForm() throws {
        let timing = ClickTiming(edgeNs: 1, handedNs: 2, triggerNs: 3, delayFrames: 4, onsetLatencyNs: 5)
        let id = UUID(uuidString: "00000000-0000-0000-0000-000000000001")!
        let time = LogTime(monoNs: 10, wallNs: 20)
        var a = LoggedEvent(id: id, kind: .click, station: 2, time: time, click: timing)
        let b = a
        a.click?.handedNs = 7
        #expect(b.click == timing && a.click?.handedNs == 7 && a != b)
        a.click?.handedNs = 2
        #expect(a == b && a.hashValue == b.hashValue)
        a.click = nil
        #expect(a.click == nil && b.click != nil)

        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let text = String(decoding: try encoder.encode(b), as: UTF8.self)
        #expect(
            text == #"{"click":{"delayFrames":4,"edgeNs":1,"handedNs":2,"onsetLatencyNs":5,"triggerNs":3},"#
                + #""id":"00000000-0000-0000-0000-000000000001","kind":"click","station":2,"#
                + #""time":{"monoNs":10,"wallNs":20}}"#, "\(text)")
        #expect(try JSONDecoder().decode(LoggedEvent.self, from: Data(text.utf8)) == b)
        let noClick = try JSONDecoder().decode(
            LoggedEvent.self,
            from: Data(
                #"{"id":"00000000-0000-0000-0000-000000000001","kind":"edge","time":{"monoNs":1,"wallNs":2}}"#.utf8))
        #expect(noClick.click == nil && noClick.kind == .edge)
    }
}
