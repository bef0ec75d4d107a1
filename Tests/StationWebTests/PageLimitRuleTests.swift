import Foundation
import StationWeb
import Synchronization
import Testing

/// The rules behind PageUnderAttackTests, without a network: which connection makes room for a
/// new one, and whose login attempts the limit counts (virtual time).
@Suite struct PageLimitRuleTests {
    final class Closed: Sendable {
        let names = Mutex<[String]>([])
        func closer(_ name: String) -> @Sendable () -> Void { { self.names.withLock { $0.append(name) } } }
    }

    func admit(_ table: ConnectionTable, _ address: String, _ name: String, _ closed: Closed) -> Int? {
        switch table.admit(address: address, close: closed.closer(name)) {
        case .refused: return nil
        case .admitted(let id, let evicted):
            evicted?()
            return id
        }
    }

    @Test func aNewConnectionTakesAnIdlePlaceOnlyFromAnAddressHoldingTwoMoreAndNeverABusyOne() {
        let table = ConnectionTable(limits: ConnectionLimits(total: 6, perAddress: 3))
        let closed = Closed()
        // The trainer's live page (busy).
        let live = admit(table, "10.0.0.2", "trainer live", closed)!
        table.setBusy(live, true)
        // An attacker fills its address's share: its fourth connection is refused, closing nothing.
        for i in 1...4 { _ = admit(table, "10.0.0.9", "attacker \(i)", closed) }
        #expect(closed.names.withLock { $0 }.isEmpty)
        #expect(table.count(address: "10.0.0.9") == 3 && table.refusals == 1)
        // Another address brings the total to 6; the trainer's new connection (its address holds
        // one) replaces the oldest idle connection of the address holding the most.
        for i in 1...2 { _ = admit(table, "10.0.0.7", "other \(i)", closed) }
        #expect(admit(table, "10.0.0.2", "trainer new", closed) != nil)
        #expect(closed.names.withLock { $0 } == ["attacker 1"])
        #expect(table.count == 6)
        // The attacker reopening it, from an address now holding no more than any other, is
        // refused and closes nobody's: no loop of each new connection closing another (issue 33).
        #expect(admit(table, "10.0.0.9", "attacker again", closed) == nil)
        #expect(admit(table, "10.0.0.7", "other 3", closed) == nil)
        #expect(closed.names.withLock { $0 } == ["attacker 1"])
        #expect(table.evictions == 1 && table.refusals == 3)
        // With every connection busy, a new one is refused and nothing is closed.
        let busy = ConnectionTable(limits: ConnectionLimits(total: 2, perAddress: 2))
        for name in ["a", "b"] { busy.setBusy(admit(busy, "10.0.0.1", name, closed)!, true) }
        #expect(admit(busy, "10.0.0.1", "c", closed) == nil)
        #expect(admit(busy, "10.0.0.3", "d", closed) == nil)
        #expect(busy.refusals == 2 && busy.count == 2)
        // A closed connection gives its place back.
        table.remove(live)
        #expect(table.count == 5 && table.count(address: "10.0.0.2") == 1)
    }

    @Test func aRememberedBrowserHasItsOwnBucketThatNoOneElseEmpties() {
        var limiter = LoginLimiter()
        let now = 1000.0
        // Wrong passwords for tom from ten addresses spend the name's bucket...
        for address in 0..<10 { _ = limiter.take(address: "10.0.0.\(address)", user: "tom", now: now) }
        #expect(limiter.take(address: "10.0.1.1", user: "tom", now: now) != nil)
        #expect(limiter.take(address: "10.0.1.1", user: "Tom", now: now) != nil)
        // ...not tom's own browser's: five attempts, then it waits like anyone.
        for _ in 0..<5 { #expect(limiter.take(address: "10.0.0.1", user: "tom", device: "d1", now: now) == nil) }
        #expect(limiter.take(address: "10.0.0.1", user: "tom", device: "d1", now: now) == 12)
        // Another remembered browser has a bucket of its own.
        #expect(limiter.take(address: "10.0.0.1", user: "tom", device: "d2", now: now) == nil)
        // The name's bucket refills one attempt every 12 s, for everyone else.
        #expect(limiter.take(address: "10.0.2.1", user: "tom", now: now + 12) == nil)
    }
}
