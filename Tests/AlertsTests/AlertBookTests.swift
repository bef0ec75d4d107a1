import Alerts
import Foundation
import Testing

/// Sent once, repeated at most every N while it holds, one "resolved": in virtual time.
@Suite struct AlertBookTests {
    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)
    static func at(_ seconds: Double) -> Date { t0.addingTimeInterval(seconds) }

    static func condition(_ key: String = "sensor B", delay: Double = 0, event: Bool = false) -> AlertCondition {
        AlertCondition(
            key: key, rule: event ? .lineupdRestarted : .sensor, station: "Station A", title: "t \(key)",
            message: "m \(key)", resolution: "r \(key)", delay: delay, isEvent: event)
    }

    /// Runs the book over `seconds` (a check every `every` s) with `holds(t)` saying when it holds.
    static func run(
        _ book: inout AlertBook, until seconds: Double, every: Double = 10, holds: (Double) -> [AlertCondition]
    ) -> [(Double, AlertNotice.Kind, String)] {
        var sent: [(Double, AlertNotice.Kind, String)] = []
        for t in stride(from: 0, through: seconds, by: every) {
            for notice in book.update(holds(t), at: at(t)) { sent.append((t, notice.kind, notice.message)) }
        }
        return sent
    }

    @Test func anAlertIsSentOnceRepeatedAtItsIntervalAndResolvedOnce() {
        var book = AlertBook(repeatEvery: 3600)
        let sent = Self.run(&book, until: 3 * 3600) { t in t >= 100 && t < 8000 ? [Self.condition()] : [] }
        #expect(sent.map(\.0) == [100, 3700, 7300, 8000])
        #expect(sent.map(\.1) == [.alert, .reminder, .reminder, .resolved])
        #expect(sent.last?.2 == "r sensor B")
    }

    @Test func withoutARepeatItIsSentOnceAndResolvedOnce() {
        var book = AlertBook(repeatEvery: nil)
        let sent = Self.run(&book, until: 20000) { t in t < 15000 ? [Self.condition()] : [] }
        #expect(sent.map(\.1) == [.alert, .resolved])
        #expect(sent.map(\.0) == [0, 15000])
    }

    @Test func aTroubleShorterThanItsDelayIsNeverSentNorResolved() {
        var book = AlertBook(repeatEvery: 600)
        let short = Self.run(&book, until: 300) { t in t < 50 ? [Self.condition(delay: 60)] : [] }
        #expect(short.isEmpty)
        let long = Self.run(&book, until: 300) { t in t < 100 ? [Self.condition(delay: 60)] : [] }
        #expect(long.map(\.0) == [60, 100])
        #expect(long.map(\.1) == [.alert, .resolved])
    }

    @Test func anEventIsSentOnceAndNeverResolved() {
        var book = AlertBook(repeatEvery: 10)
        let sent = Self.run(&book, until: 100) { t in t == 20 || t == 30 ? [Self.condition("restart", event: true)] : []
        }
        #expect(sent.map(\.0) == [20])
        #expect(sent.map(\.1) == [.alert])
        #expect(book.firing.isEmpty)
    }

    @Test func firingListsWhatWasSentAndStillHolds() {
        var book = AlertBook(repeatEvery: nil)
        _ = book.update([Self.condition("a"), Self.condition("b", delay: 60)], at: Self.at(0))
        #expect(book.firing.map(\.key) == ["a"])
        _ = book.update([Self.condition("b", delay: 60)], at: Self.at(60))
        #expect(book.firing.map(\.key) == ["b"])
    }

    @Test func theLatestMessageIsTheOneRepeatedAndTheBeginningIsKept() {
        var book = AlertBook(repeatEvery: 60)
        var c = Self.condition()
        _ = book.update([c], at: Self.at(0))
        c.message = "worse"
        let again = book.update([c], at: Self.at(60))
        #expect(again.map(\.message) == ["worse"])
        #expect(again.first?.since == Self.at(0))
    }
}
