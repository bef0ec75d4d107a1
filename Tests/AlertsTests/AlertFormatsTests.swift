import Alerts
import Foundation
import Testing

/// What each channel sends, byte for byte; the lab rule; the dead-man's decision.
@Suite struct AlertFormatsTests {
    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    static func notice(_ kind: AlertNotice.Kind = .alert) -> AlertNotice {
        AlertNotice(
            kind: kind, rule: .sensor, key: "sensor B", station: "Station A", title: "station B's sensor is stuck",
            message: "Station B's sensor reads a nose all the time.", at: t0.addingTimeInterval(90), since: t0)
    }

    @Test func subjectsSayWhichStationAndWhetherItIsOver() {
        #expect(AlertFormats.subject(Self.notice()) == "[lineup] Station A: station B's sensor is stuck")
        #expect(
            AlertFormats.subject(Self.notice(.reminder)) == "[lineup] Station A: still: station B's sensor is stuck")
        #expect(
            AlertFormats.subject(Self.notice(.resolved)) == "[lineup] Station A: resolved: station B's sensor is stuck")
        #expect(
            AlertFormats.body(Self.notice(.resolved)).contains(
                "Time: 2027-01-15 08:01:30 UTC (it began at 2027-01-15 08:00:00 UTC, 90 s before)"))
    }

    @Test func eachWebhookFormatIsWhatItsServiceTakes() throws {
        let n = Self.notice()
        let text = AlertFormats.subject(n) + "\n" + AlertFormats.body(n)
        func object(_ format: WebhookFormat) throws -> [String: Any] {
            try #require(
                try JSONSerialization.jsonObject(with: AlertFormats.webhookBody(n, format: format, topic: "lab"))
                    as? [String: Any])
        }
        let plain = try object(.json)
        #expect(plain["station"] as? String == "Station A")
        #expect(plain["state"] as? String == "alert")
        #expect(plain["rule"] as? String == "sensor")
        #expect(plain["at"] as? String == "2027-01-15T08:01:30Z")
        #expect(plain["since"] as? String == "2027-01-15T08:00:00Z")
        let ntfy = try object(.ntfy)
        #expect(ntfy["topic"] as? String == "lab")
        #expect(ntfy["title"] as? String == AlertFormats.subject(n))
        #expect(ntfy["priority"] as? Int == 4)
        #expect(try object(.slack) as NSDictionary == ["text": text])
        #expect(try object(.matrix) as NSDictionary == ["msgtype": "m.text", "body": text])
    }

    @Test func anEmailIsDotStuffedWithCRLFAndItsNonASCIIEncoded() {
        let mail = MailMessage(
            from: "lineup@lab.example", to: ["a@lab.example", "b@lab.example"], subject: "Zoë's station",
            body: "first\n.hidden dot\nlast", date: Self.t0, messageID: "1@board")
        let data = mail.data
        #expect(data.hasSuffix("\r\nlast\r\n.\r\n"))
        #expect(data.contains("\r\n..hidden dot\r\n"))
        #expect(data.contains("To: a@lab.example, b@lab.example\r\n"))
        #expect(data.contains("Subject: =?UTF-8?B?\(Data("Zoë's station".utf8).base64EncodedString())?=\r\n"))
        #expect(data.contains("Date: Fri, 15 Jan 2027 08:00:00 +0000\r\n"))
        #expect(!data.replacingOccurrences(of: "\r\n", with: "").contains("\n"))
        let utf8 = MailMessage(
            from: "l@lab.example", to: ["a@lab.example"], subject: "s", body: "Zoë", date: Self.t0, messageID: "2@b")
        #expect(
            utf8.data.contains("Content-Transfer-Encoding: base64\r\n\r\n\(Data("Zoë".utf8).base64EncodedString())\r\n")
        )
    }

    @Test func aStationNotSeenForLongerThanItsTimeIsTroubleAndOneNeverSeenIsNot() {
        let stations = [
            SeenStation(id: "a", name: "Station A", lastSeen: Self.t0),
            SeenStation(id: "b", name: "Station B", lastSeen: Self.t0.addingTimeInterval(-901)),
            SeenStation(id: "c", name: "Station C", lastSeen: nil),
        ]
        let seen = LabWatch.observe(stations, notSeenAfter: 900, at: Self.t0)
        #expect(seen.map(\.key) == ["not seen b"])
        #expect(seen.first?.station == "Station B")
        #expect(seen.first?.message.contains("for 15 min") == true)
    }

    @Test func theDeadManIsSilentWhenNothingAnswersAndFailsOnTrouble() {
        let stuck = AlertCondition(
            key: "sensor B", rule: .sensor, station: "Station A", title: "station B's sensor is stuck", message: "",
            resolution: "")
        #expect(DeadManPing.decide(watchedAnswers: false, firing: [], failOnAlerts: true) == nil)
        #expect(DeadManPing.decide(watchedAnswers: true, firing: [], failOnAlerts: true) == .success)
        #expect(
            DeadManPing.decide(watchedAnswers: true, firing: [stuck], failOnAlerts: true)
                == .failure("Station A: station B's sensor is stuck"))
        #expect(DeadManPing.decide(watchedAnswers: true, firing: [stuck], failOnAlerts: false) == .success)
    }

    @Test func durationsReadAsPeopleSayThem() {
        #expect(AlertText.duration(45) == "45 s")
        #expect(AlertText.duration(600) == "10 min")
        #expect(AlertText.duration(3 * 3600 + 300) == "3 h 5 min")
        #expect(AlertText.duration(2 * 86400 + 4 * 3600) == "2 days 4 h")
    }
}
