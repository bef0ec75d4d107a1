import Alerts
import Foundation
import StationControl
import Testing

/// Each station rule over `status` as lineupd answers it, in virtual time.
@Suite struct StationWatchTests {
    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)
    static func at(_ seconds: Double) -> Date { t0.addingTimeInterval(seconds) }

    static func watch(_ times: StationRuleTimes = StationRuleTimes()) -> StationWatch {
        StationWatch(station: "Station A", socket: "/run/lineup/control.sock", times: times)
    }

    /// lineupd started at t0 - 100 s: its uptime at `seconds`.
    static func status(at seconds: Double, started: Double = -100) -> StationStatus {
        var status = StationStatus(
            state: .idle, audio: "hw:0", gpio: "simulated lineup", uptimeSeconds: seconds - started)
        status.logWritten = 10
        status.logLost = 0
        status.logFreeMegabytes = 5000
        status.logWarnFreeMegabytes = 500
        status.logMinFreeMegabytes = 100
        return status
    }

    func keys(_ conditions: [AlertCondition]) -> [String] { conditions.map(\.key) }

    /// `status` as lineupd (started at t0 - 100 s) answers it at `seconds`: its uptime goes on.
    func see(_ watch: inout StationWatch, _ status: StationStatus, _ seconds: Double) -> [AlertCondition] {
        var now = status
        now.uptimeSeconds = seconds + 100
        return watch.observe(.success(now), at: Self.at(seconds))
    }

    @Test func aStuckSensorIsOneConditionNamingItsStationUntilItClears() {
        var watch = Self.watch()
        var status = Self.status(at: 0)
        status.flaggedStations = [FlaggedStation(station: "B", fault: .stuck)]
        let seen = see(&watch, status, 0)
        #expect(keys(seen) == ["sensor B"])
        #expect(seen.first?.title == "station B's sensor is stuck")
        #expect(seen.first?.message.contains("Look at station B") == true)
        status.flaggedStations = []
        #expect(see(&watch, status, 10).isEmpty)
    }

    @Test func everySensorFaultHasItsOwnWords() {
        var titles: Set<String> = []
        for fault in StationFault.allCases {
            var watch = Self.watch()
            var status = Self.status(at: 0)
            status.flaggedStations = [FlaggedStation(station: "C", fault: fault)]
            let seen = see(&watch, status, 0)
            #expect(seen.count == 1 && seen[0].rule == .sensor && seen[0].title.contains("station C"))
            titles.insert(seen[0].title)
        }
        #expect(titles.count == StationFault.allCases.count)
    }

    @Test func lineupdDownWaitsItsDelayAndKeepsWhatWasKnown() {
        var watch = Self.watch(StationRuleTimes(lineupdDownAfter: 30))
        var status = Self.status(at: 0)
        status.flaggedStations = [FlaggedStation(station: "B", fault: .stuck)]
        _ = see(&watch, status, 0)
        let down = watch.observe(.failure(.staleSocket(path: "/run/lineup/control.sock")), at: Self.at(10))
        // Unknown is not resolved: the stuck sensor stays while nobody can ask.
        #expect(keys(down) == ["sensor B", "lineupd down"])
        let condition = down.first { $0.rule == .lineupdDown }
        #expect(condition?.delay == 30)
        #expect(condition?.message.contains("nobody answers on /run/lineup/control.sock") == true)
    }

    @Test func aNewStartTimeIsARestartAndTheSameOneIsNot() {
        var watch = Self.watch()
        #expect(watch.observe(.success(Self.status(at: 0)), at: Self.at(0)).isEmpty)
        // Read 2 s late: the same start.
        var late = Self.status(at: 10)
        late.uptimeSeconds -= 2
        #expect(watch.observe(.success(late), at: Self.at(10)).isEmpty)
        let restarted = watch.observe(.success(Self.status(at: 20, started: 15)), at: Self.at(20))
        #expect(keys(restarted) == ["lineupd restarted"])
        #expect(restarted.first?.isEvent == true)
        #expect(watch.observe(.success(Self.status(at: 30, started: 15)), at: Self.at(30)).isEmpty)
    }

    func session(_ status: inout StationStatus, state: StationState, done: Int) {
        status.session = "3f2a9c1e-0000-0000-0000-000000000000"
        status.state = state
        status.trial = done + 1
        status.trials = 20
        status.trialsDone = done
    }

    @Test func aSessionWithoutProgressForItsTimeIsStalledAndProgressResolvesIt() {
        var watch = Self.watch(StationRuleTimes(sessionStalledAfter: 600))
        var status = Self.status(at: 0)
        session(&status, state: .searching, done: 2)
        #expect(see(&watch, status, 0).isEmpty)
        session(&status, state: .waitingForReady, done: 3)
        #expect(see(&watch, status, 300).isEmpty)
        #expect(see(&watch, status, 899).isEmpty)
        let stalled = see(&watch, status, 900)
        #expect(keys(stalled) == ["session stalled 3f2a9c1e-0000-0000-0000-000000000000"])
        #expect(stalled.first?.message.contains("no progress for 10 min (at trial 4 of 20, waiting-for-ready)") == true)
        session(&status, state: .searching, done: 4)
        #expect(see(&watch, status, 910).isEmpty)
        // A block that is complete waits for nobody.
        session(&status, state: .blockComplete, done: 20)
        #expect(see(&watch, status, 5000).isEmpty)
    }

    @Test func lostEventsAreTroubleUntilAWriteSucceeds() {
        var watch = Self.watch()
        var status = Self.status(at: 0)
        _ = see(&watch, status, 0)
        status.logLost = 57
        status.logError = "database or disk is full"
        let lost = see(&watch, status, 10)
        #expect(keys(lost) == ["log"])
        #expect(lost.first?.message.contains("57 event(s) lost") == true)
        #expect(lost.first?.message.contains("database or disk is full") == true)
        // Nothing written since: still in trouble, though nothing more was lost.
        #expect(keys(see(&watch, status, 20)) == ["log"])
        status.logWritten = 11
        #expect(see(&watch, status, 30).isEmpty)
    }

    /// Issue 36: a log the system says cannot be written (a card remounted read-only) is trouble
    /// before any write fails, between sessions too, and resolved once it can be written.
    @Test func aLogTheSystemSaysIsUnwritableIsTroubleBeforeAnyWriteFails() {
        var watch = Self.watch()
        var status = Self.status(at: 0)
        #expect(see(&watch, status, 0).isEmpty)
        status.logUnwritable = "the log's disk (/var/lib/lineup) is mounted read-only"
        let probed = see(&watch, status, 10)
        #expect(keys(probed) == ["log"])
        #expect(
            probed.first?.message.contains(
                "(the log's disk (/var/lib/lineup) is mounted read-only, found before any write failed)") == true,
            "\(probed.first?.message ?? "")")
        status.logUnwritable = nil
        #expect(see(&watch, status, 20).isEmpty)
    }

    @Test func theDiskBelowTheStationsWarningIsTroubleAndBelowItsMinimumSaysSessionsAreRefused() {
        var watch = Self.watch()
        var status = Self.status(at: 0)
        status.logFreeMegabytes = 400
        let low = see(&watch, status, 0)
        #expect(keys(low) == ["disk"])
        #expect(low.first?.message.contains("below the 500 MB the station warns at") == true)
        status.logFreeMegabytes = 50
        #expect(
            see(&watch, status, 10).first?.message.contains("new sessions are refused") == true)
        status.logFreeMegabytes = 600
        #expect(see(&watch, status, 20).isEmpty)
    }

    @Test func aFailedClickIsTroubleUntilAClickIsPlayedAndNoDeviceIsTroubleAlways() {
        var watch = Self.watch()
        var status = Self.status(at: 0)
        status.clicks = 4
        _ = see(&watch, status, 0)
        status.clicks = 5
        status.failedClicks = 1
        #expect(keys(see(&watch, status, 10)) == ["sound"])
        // No click since: still failing.
        #expect(keys(see(&watch, status, 20)) == ["sound"])
        status.clicks = 6
        #expect(see(&watch, status, 30).isEmpty)
        status.audio = "unavailable: no device"
        #expect(see(&watch, status, 40).first?.message.contains("no sound device") == true)
    }

    @Test func aSoundFaultIsTroubleFromItsFirstFailingClickToTheClickThatPlaysAndIsSentAndResolvedOnce() {
        var watch = Self.watch()
        var book = AlertBook(repeatEvery: nil)
        var status = Self.status(at: 0)
        status.soundFaults = 0
        var sent: [(Double, AlertNotice.Kind, String)] = []
        // Checks every 10 s: clicks at 20 s and 30 s fail (stalled), the click at 50 s plays.
        for t in stride(from: 0.0, through: 80, by: 10) {
            if t == 20 {
                status.clicks += 1
                status.failedClicks += 1
                status.soundFault = "sound-stalled"
                status.soundFaultWhy = "the sound device took the click but did not play it"
                status.soundFaults = 1
            }
            if t == 30 {
                // The run goes on: a second failing click is no new trouble.
                status.clicks += 1
                status.failedClicks += 1
            }
            if t == 50 {
                status.clicks += 1
                status.soundFault = nil
                status.soundFaultWhy = nil
            }
            let holds = see(&watch, status, t)
            #expect(keys(holds) == (t >= 20 && t < 50 ? ["sound"] : []), "at \(t) s")
            for notice in book.update(holds, at: Self.at(t)) { sent.append((t, notice.kind, notice.message)) }
        }
        #expect(sent.map(\.0) == [20, 50])
        #expect(sent.map(\.1) == [.alert, .resolved])
        #expect(sent.first?.2.contains("did not play it; the clicks do not sound") == true, "\(sent)")
    }

    @Test func aRunOfFailingClicksBetweenTwoChecksIsStillTroubleUntilTheNextClick() {
        var watch = Self.watch()
        var status = Self.status(at: 0)
        status.soundFaults = 0
        status.clicks = 3
        _ = see(&watch, status, 0)
        // A click failed and the next played, both between two checks: soundFault is nil again.
        status.clicks = 5
        status.failedClicks = 1
        status.soundFaults = 1
        let seen = see(&watch, status, 10)
        #expect(keys(seen) == ["sound"])
        #expect(seen.first?.message.contains("1 run(s) of failing clicks") == true, "\(seen)")
        #expect(keys(see(&watch, status, 20)) == ["sound"])
        status.clicks = 6
        #expect(see(&watch, status, 30).isEmpty)
    }

    @Test func aSyncBehindByMoreThanItsTimeIsTrouble() {
        var watch = Self.watch(StationRuleTimes(syncBehindAfter: 3600))
        var status = Self.status(at: 0)
        status.labSync = LabSyncStatus(
            reporting: true, behindRows: 12, oldestUnsynced: "2027-01-15T07:00:00Z", reportedAt: "2027-01-15T08:00:00Z")
        // t0 is 2027-01-15T08:00:00Z: the oldest row is exactly an hour old, which is not more.
        #expect(Self.t0 == AlertText.parse("2027-01-15T08:00:00Z"))
        #expect(see(&watch, status, 0).isEmpty)
        let behind = see(&watch, status, 60)
        #expect(keys(behind) == ["sync"])
        #expect(behind.first?.message.contains("12 row(s) of the log are not in the lab store") == true)
        status.labSync = LabSyncStatus(reporting: true, behindRows: 0, reportedAt: "2027-01-15T08:01:00Z")
        #expect(see(&watch, status, 70).isEmpty)
        // A sync that stops reporting falls behind from its last report.
        #expect(keys(see(&watch, status, 60 + 3601)) == ["sync"])
    }

    @Test func aRuleSetOffIsNeverSeen() {
        var watch = Self.watch(StationRuleTimes(lineupdDownAfter: nil, sessionStalledAfter: nil, syncBehindAfter: nil))
        #expect(watch.observe(.failure(.notRunning(path: "/x")), at: Self.at(0)).isEmpty)
    }
}
