import Foundation
import Testing

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

    /// The report's fault names, read through the typed detail, are the names the hand parsing
    /// (JSONSerialization, kept here as the reference) gave for every detail lineup writes.
    @Test func reportFaultNamesAsBefore() {
        func before(_ detail: String?, station: Int?) -> String {
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
            for station in [nil, 2] {
                #expect(
                    LogReader.faultName(detail, station: station) == before(detail, station: station),
                    "\(detail ?? "nil")")
            }
        }
    }
}
