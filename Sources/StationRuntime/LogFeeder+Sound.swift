import Figures
import Glibc
import SessionLog
import StationIO

/// The sound device's health, as the click player found it on the hot thread: a run of failing
/// clicks logged once as a `fault` event and said once in the journal, its end as a note.
/// `status` reads the player's own state, not this (`soundFault`, `soundFaults`).
extension LogFeeder {
    func soundReport(_ report: SoundReport) {
        let why = String(cString: strerror(report.errno))
        switch report.kind {
        case .failed:
            var words = report.fault.description
            if report.errno != 0 { words += " (\(why))" }
            Log.audio.error("\(words): the clicks do not sound; the station resets the device and tries again")
            submit(
                LoggedEvent(
                    kind: .fault, sessionId: settings.sessionId, trialId: trialId, time: time(report.timestamp),
                    kernelNs: report.clickEdge == 0 ? nil : Int64(bitPattern: report.clickEdge),
                    detail: EventDetail.encode(
                        FaultDetail(
                            errno: report.errno == 0 ? nil : report.errno, why: words, fault: report.fault.name))),
                fault: report.fault.name)
        case .recovered:
            Log.audio.notice("the sound device plays the clicks again")
            submit(
                LoggedEvent(
                    kind: .note, sessionId: settings.sessionId, trialId: trialId, time: time(report.timestamp),
                    kernelNs: Int64(bitPattern: report.clickEdge),
                    detail: EventDetail.encode(FaultDetail(why: report.fault.name, fault: "sound-recovered"))))
        }
    }
}
