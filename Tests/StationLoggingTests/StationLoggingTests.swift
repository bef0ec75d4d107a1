import Logging
import Testing

@testable import StationLogging

@Suite struct StationLoggingTests {
    @Test func aTerminalReadsTheProgramsNameAndTheJournalThePriorityAndComponent() {
        #expect(
            StationLogHandler.format(
                "no sound card", level: .warning, component: "audio", journal: false, program: "lineupd")
                == "lineupd: no sound card")
        #expect(
            StationLogHandler.format(
                "no sound card", level: .warning, component: "audio", journal: true, program: "lineupd")
                == "<4>[audio] no sound card")
        #expect(
            StationLogHandler.format("cannot write", level: .error, component: "log", journal: true, program: "lineupd")
                == "<3>[log] cannot write")
    }

    @Test func aMessageIsOneLine() {
        let line = StationLogHandler.format(
            "first\nsecond\r\nthird", level: .info, component: "x", journal: false, program: "p")
        #expect(line == "p: first second third")
    }

    @Test func theLevelComesFromTheEnvironmentAndTheJournalFromItsStream() {
        let quiet = StationLogHandler(component: "audio", environment: ["LINEUP_LOG_LEVEL": "Error"])
        #expect(quiet.logLevel == .error)
        #expect(!quiet.journal)
        let journal = StationLogHandler(component: "audio", environment: ["JOURNAL_STREAM": "8:12345"])
        #expect(journal.logLevel == .info && journal.journal)
        #expect(StationLogHandler(component: "a", environment: ["LINEUP_LOG_LEVEL": "loud"]).logLevel == .info)
    }
}
