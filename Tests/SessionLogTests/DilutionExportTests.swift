import Foundation
import LineupBench
import Testing
import TrainingEngine

@testable import SessionLog

/// Issue 38 in the exports: each trial carries its target's dilution (the stock, the factor,
/// the concentration and its unit, the diluent) and its session's conditions; the sessions'
/// export carries the conditions, the samples' the dilution. Checked against what the log's
/// readers say of each sample and session, in CSV and JSON Lines.
@Suite struct DilutionExportTests {
    static func dilutedLog() throws -> SessionLog {
        let log = try SessionLog(path: temporaryLogPath())
        var filler = LogFiller()
        filler.dogs = 2
        filler.sessionsPerDog = 3
        filler.trialsPerSession = 8
        filler.eventsPerTrial = 2
        filler.dilutedTargets = true
        try filler.fill(log)
        return log
    }

    @Test func eachTrialCarriesItsTargetsDilutionAndItsSessionsConditions() throws {
        let log = try Self.dilutedLog()
        let samples = Dictionary(uniqueKeysWithValues: try log.reader.samples().map { ($0.label, $0) })
        let trials = try log.reader.trials()
        let records = parseCSV(try exportText(log.reader, .trials, .csv))
        let header = try #require(records.first)
        let rows = records.dropFirst().map { Dictionary(uniqueKeysWithValues: zip(header, $0)) }
        let lines = try exportText(log.reader, .trials, .jsonl).split(separator: "\n")
        #expect(rows.count == trials.count && lines.count == trials.count)
        var diluted = 0
        var noTarget = 0
        for ((row, line), trial) in zip(zip(rows, lines), trials) {
            let json = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            #expect(row["trial_id"] == trial.id)
            let conditions = try log.reader.session(id: trial.sessionId).conditions
            #expect(row["temperature_c"] == conditions?.temperatureC.map { "\($0)" } ?? "")
            #expect(row["humidity_pct"] == conditions?.humidityPercent.map { "\($0)" } ?? "")
            #expect(row["conditions"] == conditions?.text ?? "")
            #expect(json["temperature_c"] as? Double == conditions?.temperatureC)
            #expect(json["conditions"] as? String == conditions?.text)
            guard let target = trial.layout.first(where: { $0.kind == .target }) else {
                noTarget += 1
                for column in header where column.hasPrefix("target_") { #expect(row[column] == "", "\(column)") }
                #expect(json["target_dilution_factor"] is NSNull)
                continue
            }
            let label = try #require(target.sample)
            let dilution = samples[label]?.dilution
            if dilution != nil { diluted += 1 }
            #expect(row["target_station"] == "\(target.station)")
            #expect(row["target_sample"] == label)
            #expect(row["target_stock"] == dilution?.stock ?? "")
            #expect(row["target_dilution_factor"] == dilution?.factor.map { "\($0)" } ?? "")
            #expect(row["target_concentration"] == dilution?.concentration.map { "\($0)" } ?? "")
            #expect(row["target_concentration_unit"] == dilution?.concentrationUnit ?? "")
            #expect(row["target_diluent"] == dilution?.diluent ?? "")
            #expect(json["target_dilution_factor"] as? Double == dilution?.factor)
            #expect(json["target_concentration"] as? Double == dilution?.concentration)
            #expect(json["target_station"] as? Int == target.station)
        }
        // Not an empty agreement: diluted targets, the stock itself and catch trials all occur.
        #expect(diluted > 10 && noTarget > 0 && diluted < trials.count - noTarget)
        #expect(rows.contains { $0["target_dilution_factor"] == "1000.0" && $0["target_concentration"] == "2.5" })
    }

    @Test func sessionsCarryTheirConditionsAndSamplesTheirDilution() throws {
        let log = try Self.dilutedLog()
        let sessions = parseCSV(try exportText(log.reader, .sessions, .csv))
        let sessionHeader = try #require(sessions.first)
        for record in sessions.dropFirst() {
            let row = Dictionary(uniqueKeysWithValues: zip(sessionHeader, record))
            let id = try #require(row["session_id"])
            let conditions = try #require(try log.reader.session(id: id).conditions)
            let temperature = try #require(conditions.temperatureC)
            let humidity = try #require(conditions.humidityPercent)
            #expect(row["temperature_c"] == "\(temperature)")
            #expect(row["humidity_pct"] == "\(humidity)")
            #expect(row["conditions"] == conditions.text ?? "")
        }
        #expect(sessions.dropFirst().contains { $0.last == "door open, \"windy\"" })
        let samples = parseCSV(try exportText(log.reader, .samples, .csv))
        let header = try #require(samples.first)
        let byLabel = Dictionary(uniqueKeysWithValues: try log.reader.samples().map { ($0.label, $0) })
        var dilutions = 0
        for record in samples.dropFirst() {
            let row = Dictionary(uniqueKeysWithValues: zip(header, record))
            let dilution = byLabel[try #require(row["label"])]?.dilution
            if dilution != nil { dilutions += 1 }
            #expect(row["stock"] == dilution?.stock ?? "")
            #expect(row["stock_id"] == dilution?.stockId ?? "")
            #expect(row["dilution_factor"] == dilution?.factor.map { "\($0)" } ?? "")
            #expect(row["concentration"] == dilution?.concentration.map { "\($0)" } ?? "")
            #expect(row["concentration_unit"] == dilution?.concentrationUnit ?? "")
            #expect(row["diluent"] == dilution?.diluent ?? "")
            #expect(row["made_on"] == dilution?.madeOn ?? "")
            #expect(row["made_by"] == dilution?.madeBy ?? "")
        }
        #expect(dilutions == 3)
    }
}
