import Figures
import Foundation
import ReadingRows
import Readings
import Testing
import TrainingEngine

@testable import SessionLog

/// Details as lineupd writes them today (flags and numbers as strings, some flags as `true`) and
/// as typed details write them read back the same; a detail that is wrong says where.
@Suite struct EventDetailTests {
    func decode<D: Decodable>(_ type: D.Type, _ text: String) throws -> D {
        try EventDetail.decode(type, from: text)
    }

    @Test(arguments: [#"{"at_target":true}"#, #"{"at_target":"true"}"#])
    func anIndicationAtTheTarget(_ text: String) throws {
        #expect(try decode(IndicationDetail.self, text) == IndicationDetail(atTarget: true))
    }

    @Test(arguments: [#"{"at_target":false}"#, #"{"at_target":"false"}"#])
    func anIndicationElsewhere(_ text: String) throws {
        #expect(try decode(IndicationDetail.self, text) == IndicationDetail(atTarget: false))
    }

    @Test func pressesInBothSpellings() throws {
        let sample = "0b7e2a6c-1111-4222-8333-444455556666"
        #expect(
            try decode(PressDetail.self, #"{"manual_click":"true","sample":"\#(sample)"}"#)
                == PressDetail(press: .manualClick, sample: sample))
        #expect(try decode(PressDetail.self, #"{"manual_click":true}"#) == PressDetail(press: .manualClick))
        #expect(try decode(PressDetail.self, #"{"error_mark":"true"}"#) == PressDetail(press: .errorMark))
        #expect(throws: EventDetailError.self) { try decode(PressDetail.self, #"{"sample":"x"}"#) }
    }

    @Test func cuesWithNumbersAsStringsOrNumbers() throws {
        let end = CueDetail(cue: "exercise-end", repetition: 2, clicks: 5, errors: 1, aborted: false)
        #expect(
            try decode(
                CueDetail.self,
                #"{"aborted":"false","clicks":"5","cue":"exercise-end","errors":"1","repetition":"2"}"#) == end)
        #expect(
            try decode(CueDetail.self, #"{"aborted":false,"clicks":5,"cue":"exercise-end","errors":1,"repetition":2}"#)
                == end)
        #expect(
            try decode(CueDetail.self, #"{"cue":"exercise-start","repetition":"1","seconds":"30.0"}"#)
                == CueDetail(cue: "exercise-start", repetition: 1, seconds: 30))
        #expect(try decode(CueDetail.self, #"{"cue":"trial-start"}"#) == CueDetail(cue: "trial-start"))
    }

    @Test func faultsOfEveryShape() throws {
        #expect(try decode(FaultDetail.self, #"{"sensor":"stuck"}"#).sensor == "stuck")
        #expect(try decode(FaultDetail.self, #"{"click_failed":"underrun"}"#).clickFailed == "underrun")
        for text in [
            #"{"errno":"5","read":"failed","why":"Input/output error"}"#,
            #"{"errno":5,"read":"failed","why":"Input/output error"}"#,
        ] {
            let read = try decode(FaultDetail.self, text)
            #expect(read.read == "failed" && read.errno == 5 && read.why == "Input/output error")
        }
        let dropped = try decode(FaultDetail.self, #"{"fault":"log-events-dropped","dropped_events":3}"#)
        #expect(dropped.fault == "log-events-dropped" && dropped.droppedEvents == 3)
    }

    @Test func settledNotesAndEdges() throws {
        #expect(try decode(SettledDetail.self, #"{"button":"","settled":"true"}"#) == SettledDetail())
        #expect(
            try decode(SettledDetail.self, #"{"button":"ready","settled":true}"#) == SettledDetail(button: "ready"))
        #expect(try decode(EdgeDetail.self, #"{"chatter":true}"#) == EdgeDetail(chatter: true))
        #expect(try decode(EdgeDetail.self, #"{"button":"error"}"#) == EdgeDetail(button: "error"))
    }

    /// A typed detail encodes with real flags and numbers, and reads back as itself.
    @Test func typedDetailsRoundTrip() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        func text(_ value: some Encodable) throws -> String {
            String(decoding: try encoder.encode(value), as: UTF8.self)
        }
        #expect(try text(IndicationDetail(atTarget: true)) == #"{"at_target":true}"#)
        #expect(try text(PressDetail(press: .errorMark, sample: "s")) == #"{"error_mark":true,"sample":"s"}"#)
        let cue = CueDetail(cue: "exercise-end", repetition: 2, clicks: 5, errors: 1, aborted: true)
        #expect(try decode(CueDetail.self, try text(cue)) == cue)
        let fault = try decode(FaultDetail.self, try text(FaultDetail(read: "failed", errno: 5, why: "EIO")))
        #expect(fault.read == "failed" && fault.errno == 5 && fault.why == "EIO")
        #expect(try text(SettledDetail(button: "ready")) == #"{"button":"ready","settled":true}"#)
        // Settled late: when the station learnt the level.
        let late = SettledDetail(knownNs: 2_365_000_000)
        #expect(try text(late) == #"{"known_ns":2365000000,"settled":true}"#)
        #expect(try decode(SettledDetail.self, try text(late)) == late)
    }

    @Test func aWrongDetailSaysWhichFieldAndWhy() {
        #expect(throws: EventDetailError.self) { try decode(IndicationDetail.self, #"{"at_target":"maybe"}"#) }
        do {
            _ = try decode(CueDetail.self, #"{"cue":"exercise-end","clicks":"five"}"#)
            Issue.record("a count that is not a number was read")
        } catch {
            #expect("\(error)".contains("\"clicks\"") && "\(error)".contains("\"five\" is not a number"), "\(error)")
        }
        #expect(throws: EventDetailError.self) { try decode(IndicationDetail.self, "not json") }
        #expect(throws: EventDetailError.self) { try decode(IndicationDetail.self, "{}") }
    }

    /// Rows a log kept before the typed details (the feeder's string maps, byte for byte) read
    /// back from a real log file as their types, with the values they meant.
    @Test func oldFormatRowsInALogStillRead() throws {
        let log = try SessionLog(path: temporaryLogPath())
        let old: [(EventKind, String)] = [
            (.note, #"{"button":"","settled":"true"}"#),
            (.note, #"{"manual_click":"true","sample":"0b7e2a6c-1111-4222-8333-444455556666"}"#),
            (.cue, #"{"aborted":"true","clicks":"7","cue":"exercise-end","errors":"3","repetition":"2"}"#),
            (.cue, #"{"cue":"exercise-start","repetition":"1","seconds":"30.0"}"#),
            (.fault, #"{"errno":"5","read":"failed","why":"Input\/output error"}"#),
            (.indication, #"{"at_target":true}"#),
            (.edge, #"{"chatter":true}"#),
        ]
        try log.append(old.map { LoggedEvent(kind: $0.0, detail: $0.1) })
        let rows = try log.reader.events(LogFilter()).sorted { $0.seq < $1.seq }.compactMap(\.detail)
        #expect(rows == old.map(\.1), "the rows are as written")
        #expect(try EventDetail.decode(SettledDetail.self, from: rows[0]) == SettledDetail())
        #expect(
            try EventDetail.decode(PressDetail.self, from: rows[1])
                == PressDetail(press: .manualClick, sample: "0b7e2a6c-1111-4222-8333-444455556666"))
        #expect(
            try EventDetail.decode(CueDetail.self, from: rows[2])
                == CueDetail(cue: "exercise-end", repetition: 2, clicks: 7, errors: 3, aborted: true))
        #expect(
            try EventDetail.decode(CueDetail.self, from: rows[3])
                == CueDetail(cue: "exercise-start", repetition: 1, seconds: 30))
        let read = try EventDetail.decode(FaultDetail.self, from: rows[4])
        #expect(read.read == "failed" && read.errno == 5 && read.why == "Input/output error")
        #expect(try EventDetail.decode(IndicationDetail.self, from: rows[5]) == IndicationDetail(atTarget: true))
        #expect(try EventDetail.decode(EdgeDetail.self, from: rows[6]) == EdgeDetail(chatter: true))
        // The report names an input that could not be read as such, in old rows and new.
        #expect(try log.reader.report().faults == ["unreadable": 1])
    }

    /// A typed detail is written with real flags and numbers, keys sorted, slashes as they are.
    @Test func theWritersSpelling() {
        #expect(
            EventDetail.encode(CueDetail(cue: "exercise-start", repetition: 1, seconds: 30))
                == #"{"cue":"exercise-start","repetition":1,"seconds":30}"#)
        #expect(
            EventDetail.encode(FaultDetail(read: "failed", errno: 5, why: "Input/output error"))
                == #"{"errno":5,"read":"failed","why":"Input/output error"}"#)
        #expect(EventDetail.encode(SettledDetail()) == #"{"settled":true}"#)
        #expect(EventDetail.encode(EdgeDetail(chatter: true)) == #"{"chatter":true}"#)
    }

    /// The report's fault names, read through the typed detail, are the names the hand parsing
    /// (JSONSerialization, kept here as the reference) gave for every detail lineup writes, but
    /// for an input that cannot be read: named `unreadable`, where the hand parsing said `errno`.
    @Test func reportFaultNamesAsBefore() {
        func before(_ detail: String?, station: String?) -> String {
            guard let detail, let data = detail.data(using: .utf8),
                let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
            else { return "fault" }
            if let name = object["fault"] as? String { return name }
            if let sensor = object["sensor"] as? String {
                return "sensor \(sensor)" + (station.map { " at station \($0)" } ?? "")
            }
            if object["click_failed"] != nil { return "click-failed" }
            return object.keys.sorted().first ?? "fault"
        }
        let details: [String?] = [
            nil, "", "not json", "{}", #"{"sensor":"stuck"}"#, #"{"sensor":"active-at-start"}"#,
            #"{"click_failed":"underrun"}"#, #"{"errno":"5","read":"failed","why":"Input/output error"}"#,
            #"{"errno":"5","read":"abandoned","why":"No such device"}"#,
            #"{"fault":"log-events-dropped","dropped_events":3}"#, #"{"something":"new"}"#,
        ]
        for detail in details {
            let unreadable = detail?.contains(#""read":"#) == true
            for station in [nil, "East (2)"] {
                #expect(
                    FaultDetail.name(detail, station: station)
                        == (unreadable ? "unreadable" : before(detail, station: station)), "\(detail ?? "nil")")
            }
        }
        #expect(FaultDetail.name(#"{"errno":5,"read":"abandoned","why":"No such device"}"#) == "unreadable")
    }
}
