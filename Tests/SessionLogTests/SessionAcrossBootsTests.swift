import Foundation
import GRDB
import Testing
import TrainingEngine

@testable import SessionLog

/// Issue 36: a double-blind session resumed after a power cut spans two boots, and monotonic
/// times restart at each boot. verify-blinding tells the boots apart by the session's boot id
/// and the resume's note (`SessionBoots`), never by comparing `mono_ns` across them: a trial run
/// after the reboot started after its commitment, whatever its monotonic time; within one boot
/// the monotonic times still decide.
@Suite struct SessionAcrossBootsTests {
    /// A 3-trial double-blind session started in boot `A` (monotonic times near 5,000 s), its
    /// trial 1 run there, trial 2 cut short there and logged at the resume, trial 3 run after the
    /// resume at monotonic times near 3 s (a new boot's). `resume` is the resume's note: its
    /// boot and first trial; nil: no note.
    static func log(sessionBoot: String?, resume: (boot: String?, firstTrial: Int)?) throws -> (String, String) {
        let path = temporaryLogPath()
        let log = try SessionLog(path: path)
        let dog = try log.addDog(name: "Rex", born: nil, notes: nil)
        let target = try log.addSample(SampleRecord(label: "T-7", kind: .target))
        let before = LogTime(monoNs: 5_000_000_000_000, wallNs: 1_780_000_000_000_000_000)
        func at(_ base: LogTime, _ seconds: Int64) -> LogTime {
            LogTime(monoNs: base.monoNs + seconds * 1_000_000_000, wallNs: base.wallNs + seconds * 1_000_000_000)
        }
        let session = SessionRecord(
            dogId: dog.id, phase: "phase-3", step: "1", mode: .doubleBlind, bootId: sessionBoot, time: before)
        let id = session.id.uuidString.lowercased()
        let stations = [LayoutCommitment.Station(station: 1, kind: .target, label: "T-7")]
        let salts = (1...3).map { _ in LayoutCommitment.newSalt() }
        var records: [any AppendableRecord] = [session]
        for n in 1...3 {
            records.append(
                LayoutCommitmentRecord(
                    sessionId: session.id, trialNumber: n,
                    digest: LayoutCommitment.digest(session: id, trial: n, stations: stations, salt: salts[n - 1]),
                    time: before))
        }
        func trial(_ n: Int, _ started: LogTime, _ ended: LogTime, _ outcome: TrialOutcome) -> [any AppendableRecord] {
            let trialId = UUID()
            return [
                TrialRecord(
                    id: trialId, sessionId: session.id, number: n,
                    layout: [StationSlot(station: 1, sampleId: target.id, kind: .target)], outcome: outcome,
                    started: started, ended: ended),
                LayoutOpeningRecord(
                    sessionId: session.id, trialNumber: n, trialId: trialId, salt: salts[n - 1], time: ended),
            ]
        }
        records += trial(1, at(before, 10), at(before, 20), .hit)
        try log.append(records)
        // After the cut: trial 2's row from its own events (boot A's times), the resume's note,
        // then trial 3 at the new boot's monotonic times.
        let afterBoot = LogTime(monoNs: 3_000_000_000, wallNs: at(before, 600).wallNs)
        var resumed: [any AppendableRecord] = trial(2, at(before, 30), at(before, 35), .aborted)
        if let resume {
            resumed.append(
                LoggedEvent(
                    kind: .note, sessionId: session.id, time: afterBoot,
                    detail: EventDetail.encode(ResumedDetail(bootId: resume.boot, firstTrial: resume.firstTrial))))
        }
        resumed += trial(3, at(afterBoot, 5), at(afterBoot, 15), .hit)
        resumed.append(SessionEnd(sessionId: session.id, how: .ended, time: at(afterBoot, 20)))
        try log.append(resumed)
        return (path, id)
    }

    static func problems(_ path: String, _ session: String) throws -> [String] {
        try SessionLog.openReader(path: path).verifyBlinding(session: session).failed.flatMap(\.problems)
    }

    @Test func aTrialRunAfterTheRebootStartedAfterItsCommitment() throws {
        let (path, session) = try Self.log(sessionBoot: "boot-a", resume: ("boot-b", 3))
        let v = try SessionLog.openReader(path: path).verifyBlinding(session: session)
        #expect(v.trials.map(\.number) == [1, 2, 3])
        #expect(v.failed.isEmpty, "\(v.failed)")
    }

    @Test func withinOneBootTheMonotonicTimesStillDecide() throws {
        // Resumed in the same boot (a kill, not a power cut): trial 3's start, before its
        // commitment's monotonic time, is a layout known uncommitted.
        let (same, sameId) = try Self.log(sessionBoot: "boot-a", resume: ("boot-a", 3))
        #expect(
            try Self.problems(same, sameId)
                == ["trial 3: it was committed after it started (its layout was known uncommitted)"])
        // No resume logged: nothing says trial 3 ran in another boot.
        let (none, noneId) = try Self.log(sessionBoot: "boot-a", resume: nil)
        #expect(try Self.problems(none, noneId).count == 1)
        // A log without boot ids is judged as before: by monotonic times.
        let (unknown, unknownId) = try Self.log(sessionBoot: nil, resume: (nil, 3))
        #expect(try Self.problems(unknown, unknownId).count == 1)
    }

    @Test func theTrialCutShortBelongsToTheBootItRanIn() throws {
        // The resume's first trial is the one after the trial cut short: trial 2 (boot A's times,
        // logged at the resume) is judged in boot A, where its commitment came first.
        let (path, session) = try Self.log(sessionBoot: "boot-a", resume: ("boot-b", 2))
        #expect(try Self.problems(path, session).isEmpty)
        let boots = SessionBoots(
            start: "a", resumes: [ResumedDetail(bootId: "b", firstTrial: 4), ResumedDetail(bootId: "c", firstTrial: 9)])
        #expect((1...10).map { boots.boot(ofTrial: $0) } == ["a", "a", "a", "b", "b", "b", "b", "b", "c", "c"])
        #expect(!boots.ranInLaterBoot(trial: 3) && boots.ranInLaterBoot(trial: 4) && boots.ranInLaterBoot(trial: 9))
        #expect(
            !SessionBoots(start: nil, resumes: [ResumedDetail(bootId: "b", firstTrial: 1)]).ranInLaterBoot(trial: 1))
    }

    @Test func theResumeNoteIsReadFromTheLog() throws {
        let (path, session) = try Self.log(sessionBoot: "boot-a", resume: ("boot-b", 3))
        let boots = try SessionLog.openReader(path: path).read { db in
            try LogReader.sessionBoots(db, session: session)
        }
        #expect(boots == SessionBoots(start: "boot-a", resumes: [ResumedDetail(bootId: "boot-b", firstTrial: 3)]))
        #expect(
            EventDetail.encode(ResumedDetail(bootId: "boot-b", firstTrial: 3))
                == #"{"boot_id":"boot-b","first_trial":3,"resumed":true}"#)
    }

    /// Issue 38: a staircase trial's dilution is committed with the trial before it, in that
    /// trial's boot. After a resume in another boot the next trial started after it, whatever the
    /// monotonic times; in the same boot they decide; constant stimuli commit every trial's at
    /// the start, in the session's boot.
    @Test func aDilutionCommittedBeforeTheRebootIsJudgedByTheBoots() throws {
        var check = try DatabaseQueue().read { db in try DilutionCommitmentCheck(db, session: "s") }
        let salt = String(repeating: "01", count: 32)
        // Trial 4's dilution committed with trial 3, at boot A's monotonic times (5,000 s).
        check.commitments[4] = [
            (DilutionCommitment.digest(session: "s", trial: 4, label: "T-1", salt: salt), 5_000_000_000_000)
        ]
        check.openings[4] = (salt, "t1")
        func problems(_ boots: SessionBoots) -> [String] {
            check.problems(
                trial: 4, original: true, startedMonoNs: 3_000_000_000, targetLabel: "T-1", targetSample: "t1",
                boots: boots)
        }
        let late = ["its dilution was committed after it started"]
        // Resumed in boot B from trial 4: trial 3, and the commitment, were boot A's.
        #expect(problems(SessionBoots(start: "a", resumes: [ResumedDetail(bootId: "b", firstTrial: 4)])).isEmpty)
        // The same boot: the monotonic times decide, and trial 4 started before it.
        #expect(problems(SessionBoots(start: "a", resumes: [ResumedDetail(bootId: "a", firstTrial: 4)])) == late)
        // Trial 3 already ran in boot B (resumed from trial 2): committed in B, started before it.
        #expect(problems(SessionBoots(start: "a", resumes: [ResumedDetail(bootId: "b", firstTrial: 2)])) == late)
        // No boots recorded: as before.
        #expect(problems(SessionBoots(start: nil, resumes: [])) == late)
        // Constant stimuli: committed at the start, in boot A; trial 4 ran in B.
        check.committedAtStart = true
        #expect(problems(SessionBoots(start: "a", resumes: [ResumedDetail(bootId: "b", firstTrial: 2)])).isEmpty)
    }
}
