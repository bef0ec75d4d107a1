import Foundation
import SessionLog
import StationIO

/// The feeder's pulses into the log, one event each, with the times the hot loop switched it.
extension LogFeeder {
    func logFeeder(_ pulse: FeederPulse) {
        // The pulse comes after its click's trial may have ended (its delay): it belongs to
        // the trial of the click it followed, found by that click's edge.
        let trial = lastClick.edge == pulse.clickEdge && lastClick.trialId != nil ? lastClick.trialId : trialId
        if pulse.failed {
            Log.station.error("the feeder's line could not be set: the dog was not fed by machine for this click")
        }
        submit(
            LoggedEvent(
                kind: .feeder, sessionId: settings.sessionId, trialId: trial, time: time(pulse.onAt),
                kernelNs: Int64(bitPattern: pulse.onAt), value: pulse.failed ? 0 : 1,
                durationNs: pulse.failed ? nil : Int64(bitPattern: pulse.offAt &- pulse.onAt),
                detail: EventDetail.encode(
                    FeederDetail(clickEdgeNs: Int64(bitPattern: pulse.clickEdge), failed: pulse.failed ? true : nil))))
    }
}
