import Foundation
import Testing

@testable import StationIO

@Suite struct EventRingTests {
    @Test func fullRingRefusesAndCounts() {
        let ring = EventRing<Int>(capacity: 4)
        for i in 0..<4 { #expect(ring.push(i)) }
        #expect(ring.push(99) == false)
        #expect(ring.overflowCount == 1)
        var seen: [Int] = []
        ring.drain { seen.append($0) }
        #expect(seen == [0, 1, 2, 3])
        #expect(ring.push(4))
    }

    @Test func oneProducerOneConsumerLoseNothing() {
        let ring = EventRing<UInt64>(capacity: 1024)
        let total: UInt64 = 200_000
        let producer = Thread {
            var i: UInt64 = 0
            while i < total { if ring.push(i) { i += 1 } }
        }
        producer.start()
        var expected: UInt64 = 0
        var inOrder = true
        while expected < total {
            ring.drain { value in
                if value != expected { inOrder = false }
                expected += 1
            }
        }
        #expect(inOrder)
        #expect(expected == total)
    }
}
