import Foundation
import StationControl

/// How long each station rule waits (seconds); nil turns a rule off.
public struct StationRuleTimes: Sendable, Hashable {
    /// lineupd not answering on its socket for this long.
    public var lineupdDownAfter: Double?
    /// A session that should be running with no trial (or round) ended or started for this long.
    public var sessionStalledAfter: Double?
    /// The lab store behind the station's log by more than this.
    public var syncBehindAfter: Double?

    public init(lineupdDownAfter: Double? = 60, sessionStalledAfter: Double? = 600, syncBehindAfter: Double? = 21_600) {
        self.lineupdDownAfter = lineupdDownAfter
        self.sessionStalledAfter = sessionStalledAfter
        self.syncBehindAfter = syncBehindAfter
    }
}

/// The station rules over lineupd's `status`, one observation after another. Holds what the
/// rules must remember between two (lineupd's start, the session's last progress, the counts of
/// lost events and failed clicks); no clock of its own.
public struct StationWatch: Sendable {
    public let station: String
    public let socket: String
    public let times: StationRuleTimes

    /// lineupd's start, as the latest status gave it (the time then minus its uptime).
    var started: Date?
    /// The session's last progress: what counted as progress, and when it was seen.
    var progress: String?
    var progressAt: Date?
    /// The log's counts at the latest status, and whether it was in trouble then.
    var logCounts: (written: Int, lost: Int, error: String?)?
    var logTrouble: String?
    /// The sound's counts at the latest status, and its trouble then.
    var soundCounts: (tried: UInt64, failed: UInt64)?
    var soundTrouble: String?
    /// What the latest status showed: kept while lineupd does not answer (unknown is not resolved).
    var fromStatus: [AlertCondition] = []
    var downSince: Date?

    /// A start that moved by less than this is the same start: uptime and our clock are read a
    /// few milliseconds apart, and a loaded board may be slow to answer.
    static let sameStartTolerance = 5.0

    public init(station: String, socket: String, times: StationRuleTimes) {
        self.station = station
        self.socket = socket
        self.times = times
    }

    /// What holds now: `status` is lineupd's answer, or why there was none (the client's words).
    public mutating func observe(_ status: Result<StationStatus, ControlClientError>, at now: Date) -> [AlertCondition]
    {
        switch status {
        case .failure(let error):
            if downSince == nil { downSince = now }
            var conditions = fromStatus.filter { !$0.isEvent }
            if let after = times.lineupdDownAfter {
                conditions.append(
                    AlertCondition(
                        key: "lineupd down", rule: .lineupdDown, station: station, title: "lineupd is not answering",
                        message:
                            "lineupd, the station's daemon, is not answering (\(error)). No session can run and "
                            + "nothing is being recorded. On the station: `systemctl status lineupd` and "
                            + "`journalctl -u lineupd -n 50` say why; `sudo systemctl restart lineupd` starts it again.",
                        resolution: "lineupd answers again.", delay: after))
            }
            return conditions
        case .success(let status):
            downSince = nil
            var conditions = restart(status, now)
            conditions += sensors(status)
            conditions += stalled(status, now)
            conditions += log(status)
            conditions += disk(status)
            conditions += sound(status)
            conditions += sync(status, now)
            fromStatus = conditions
            return conditions
        }
    }

    mutating func restart(_ status: StationStatus, _ now: Date) -> [AlertCondition] {
        let start = now.addingTimeInterval(-status.uptimeSeconds)
        defer { started = start }
        guard let before = started, abs(start.timeIntervalSince(before)) > Self.sameStartTolerance else { return [] }
        return [
            AlertCondition(
                key: "lineupd restarted", rule: .lineupdRestarted, station: station, title: "lineupd restarted",
                message:
                    "lineupd restarted at \(AlertText.time(start)) (it had been running since \(AlertText.time(before))). "
                    + "A session that was running then was interrupted: look at it on the station's page or with "
                    + "`lineupctl sessions`, and `journalctl -u lineupd` says why it stopped.",
                resolution: "", isEvent: true)
        ]
    }

    func sensors(_ status: StationStatus) -> [AlertCondition] {
        (status.flaggedStations ?? []).map { flagged in
            let at = flagged.station
            let (title, what): (String, String)
            switch flagged.fault {
            case .stuck:
                title = "station \(at)'s sensor is stuck"
                what =
                    "Station \(at)'s sensor reads a nose all the time. Look at station \(at): a lid, a paw, dirt "
                    + "or a misaligned beam; holds there are not indications until it clears."
            case .silent:
                title = "station \(at)'s sensor seems dead"
                what =
                    "Station \(at)'s sensor has not seen the dog when it should have. Check its wiring, power and "
                    + "alignment; until then the dog's visits to \(at) are not seen."
            case .chatter:
                title = "station \(at)'s sensor is chattering"
                what =
                    "Station \(at)'s sensor flickers on and off far faster than a dog moves. Check its wiring "
                    + "and connector, and for sunlight or a reflection in the beam."
            case .activeAtStart:
                title = "station \(at) was active when a trial was to start"
                what =
                    "Station \(at) was active when a trial was to start, so it did not start. Clear station "
                    + "\(at) (a lid, a paw, a container touching the sensor) and press ready."
            case .unreadable:
                title = "station \(at)'s input cannot be read"
                what =
                    "lineupd cannot read station \(at)'s input line: its edges are not seen. Check the board's "
                    + "wiring; `journalctl -u lineupd` has the error."
            }
            return AlertCondition(
                key: "sensor \(at)", rule: .sensor, station: station, title: title, message: what,
                resolution: "Station \(at)'s sensor is no longer flagged.")
        }
    }

    /// States in which the session should move on by itself or by the trainer's press.
    static let running: Set<StationState> = [
        .waitingForReady, .blocked, .searching, .holding, .interval, .roundRunning,
    ]

    mutating func stalled(_ status: StationStatus, _ now: Date) -> [AlertCondition] {
        guard let session = status.session, Self.running.contains(status.state) else {
            progress = nil
            progressAt = nil
            return []
        }
        let mark = [
            session, "\(status.trialsDone ?? -1)", "\(status.trial ?? -1)", "\(status.exercisesDone ?? -1)",
            "\(status.exercise ?? -1)",
        ].joined(separator: "|")
        if mark != progress {
            progress = mark
            progressAt = now
        }
        guard let after = times.sessionStalledAfter, let since = progressAt, now.timeIntervalSince(since) >= after
        else { return [] }
        let short = String(session.prefix(8))
        let where_ = status.trial.map { "trial \($0)" + (status.trials.map { " of \($0)" } ?? "") } ?? "its start"
        let activity = status.activity.map { " The station says: \($0)." } ?? ""
        return [
            AlertCondition(
                key: "session stalled \(session)", rule: .sessionStalled, station: station,
                title: "session \(short) has stalled",
                message:
                    "Session \(short) has made no progress for \(AlertText.duration(now.timeIntervalSince(since))) "
                    + "(at \(where_), \(status.state.rawValue)).\(activity) Someone should look at the station: "
                    + "press ready, clear what blocks it, or end the session.",
                resolution: "Session \(short) moves on again, or has ended.")
        ]
    }

    /// The log is in trouble from a lost event or a new write error until a write succeeds.
    mutating func log(_ status: StationStatus) -> [AlertCondition] {
        let written = status.logWritten ?? 0
        let lost = status.logLost ?? 0
        defer { logCounts = (written, lost, status.logError) }
        if let before = logCounts {
            if lost > before.lost || (status.logError != nil && status.logError != before.error) {
                let what = status.logError.map { "the last error: \($0)" } ?? "no error given"
                logTrouble = "\(lost) event(s) lost since lineupd started; \(what)"
            } else if written > before.written {
                logTrouble = nil
            }
        } else if lost > 0, let error = status.logError {
            logTrouble = "\(lost) event(s) lost since lineupd started; the last error: \(error)"
        }
        // Asked of the system directly (a read-only card), before any write has failed.
        let probed = status.logUnwritable.map { "\($0), found before any write failed" }
        guard let trouble = logTrouble ?? probed else { return [] }
        return [
            AlertCondition(
                key: "log", rule: .log, station: station, title: "the session log cannot be written",
                message:
                    "The station cannot write its session log (\(trouble)). Trials run now may not be recorded: "
                    + "stop the session. Free space on the card or replace it; `journalctl -u lineupd` has the details.",
                resolution: "The session log is being written again.")
        ]
    }

    func disk(_ status: StationStatus) -> [AlertCondition] {
        guard let free = status.logFreeMegabytes, let warn = status.logWarnFreeMegabytes,
            let minimum = status.logMinFreeMegabytes, free < max(warn, minimum)
        else { return [] }
        let refused =
            free < minimum
            ? "below the \(minimum) MB a session needs: new sessions are refused"
            : "below the \(warn) MB the station warns at (sessions are refused below \(minimum) MB)"
        return [
            AlertCondition(
                key: "disk", rule: .disk, station: station, title: "the station's disk is nearly full",
                message:
                    "Only \(free) MB free on the disk of the session log, \(refused). Make room: remove exports "
                    + "and old files, or move the log to a larger card (docs/install.md).",
                resolution: "The log's disk has room again (\(free) MB free).")
        ]
    }

    /// In trouble while lineupd says the clicks fail (`soundFault`: from the first failing click
    /// to the one that plays again), and from a failed cue, or a run of failing clicks begun
    /// and ended between two checks, until a click or cue is played. A lineupd that does not
    /// report `soundFaults` is judged by its failed clicks.
    mutating func sound(_ status: StationStatus) -> [AlertCondition] {
        let tried = status.clicks + (status.cues ?? 0)
        let failed = (status.soundFaults ?? status.failedClicks) + (status.failedCues ?? 0)
        defer { soundCounts = (tried, failed) }
        if let before = soundCounts {
            if failed > before.failed {
                soundTrouble =
                    status.soundFaults != nil
                    ? "\(failed - before.failed) run(s) of failing clicks, or failed cue(s), since the last check"
                    : "\(failed - before.failed) click(s) or cue(s) failed since the last check"
            } else if tried > before.tried, soundTrouble != nil {
                soundTrouble = nil
            }
        } else if failed > 0 {
            soundTrouble =
                status.soundFaults != nil
                ? "\(failed) run(s) of failing clicks, or failed cue(s), since lineupd started"
                : "\(failed) click(s) or cue(s) failed since lineupd started"
        }
        var what = soundTrouble
        if let fault = status.soundFault {
            what = "\(status.soundFaultWhy ?? fault); the clicks do not sound"
            soundTrouble = nil  // the run going on is this; its end is the resolution
        }
        if status.audio.hasPrefix("unavailable") { what = "no sound device (\(status.audio))" }
        guard let what else { return [] }
        return [
            AlertCondition(
                key: "sound", rule: .sound, station: station, title: "the clicker's sound is failing",
                message:
                    "The station's sound is failing: \(what). The dog may not hear the click. Stop the session; "
                    + "check the speaker and the sound card, and `journalctl -u lineupd` for the audio errors; "
                    + "`sudo systemctl restart lineupd` reopens the device.",
                resolution: "The station's sound works again.")
        ]
    }

    func sync(_ status: StationStatus, _ now: Date) -> [AlertCondition] {
        guard let after = times.syncBehindAfter, let sync = status.labSync else { return [] }
        let what: String
        let since: Date
        if !sync.reporting {
            since = now.addingTimeInterval(-status.uptimeSeconds)
            what = "lineup-sync has not reported since lineupd started"
        } else if let rows = sync.behindRows, rows > 0, let oldest = sync.oldestUnsynced.flatMap(AlertText.parse) {
            since = oldest
            what = "\(rows) row(s) of the log are not in the lab store, the oldest from \(AlertText.time(oldest))"
        } else if sync.behindRows == nil {
            since = sync.lastSuccess.flatMap(AlertText.parse) ?? now.addingTimeInterval(-status.uptimeSeconds)
            what = "the lab store did not answer" + (sync.lastError.map { " (\($0))" } ?? "")
        } else {
            since = sync.reportedAt.flatMap(AlertText.parse) ?? now
            what = "lineup-sync last reported at \(AlertText.time(since))"
        }
        guard now.timeIntervalSince(since) > after else { return [] }
        return [
            AlertCondition(
                key: "sync", rule: .sync, station: station, title: "the lab store is behind",
                message:
                    "The lab store is \(AlertText.duration(now.timeIntervalSince(since))) behind this station: "
                    + "\(what). Check the station's network and `journalctl -u lineup-sync` (docs/lab.md).",
                resolution: "The lab store has caught up with this station.")
        ]
    }
}
