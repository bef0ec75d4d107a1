import Foundation
import GRDB
import Testing
import TrainingEngine

@testable import SessionLog

/// Issue 38's conditions: a session's temperature, humidity and free text are kept with it and
/// read back by `session show`; out of range is refused with the value named, by the one check
/// and again by the log's own constraints.
@Suite struct SessionConditionsTests {
    @Test func conditionsAreKeptWithTheSession() throws {
        let log = try SessionLog(path: temporaryLogPath())
        let dog = DogRecord(name: "Aino")
        var hot = SessionRecord(dogId: dog.id, mode: .automated)
        hot.conditions = try SessionConditions(temperatureC: 40, humidityPercent: 70, text: "  climate room B ")
            .checked()
        let plain = SessionRecord(dogId: dog.id, mode: .automated)
        try log.append([dog, hot, plain])
        let shown = try log.reader.session(id: hot.id.logText).conditions
        #expect(shown == SessionConditions(temperatureC: 40, humidityPercent: 70, text: "climate room B"))
        #expect(shown?.description == "40 °C, 70 % RH; climate room B")
        #expect(try log.reader.session(id: plain.id.logText).conditions == nil)
        #expect(SessionConditions(humidityPercent: 55.5).description == "55.5 % RH")
    }

    @Test func outOfRangeIsRefusedNamingTheValue() throws {
        #expect(throws: SessionLogError.invalidInput("--humidity 101: relative humidity is a percentage, 0 to 100")) {
            try SessionConditions(humidityPercent: 101).checked()
        }
        #expect(throws: SessionLogError.self) { try SessionConditions(humidityPercent: -1).checked() }
        #expect(throws: SessionLogError.self) { try SessionConditions(temperatureC: 104).checked() }
        #expect(throws: SessionLogError.self) { try SessionConditions(temperatureC: .nan).checked() }
        #expect(try SessionConditions(text: "  ").checked() == nil)
        // A writer that skipped the check still cannot put it in the log.
        let log = try SessionLog(path: temporaryLogPath())
        let dog = DogRecord(name: "Aino")
        var wet = SessionRecord(dogId: dog.id, mode: .automated)
        wet.conditions = SessionConditions(humidityPercent: 150)
        #expect(throws: (any Error).self) { try log.append([dog, wet]) }
    }
}
