import Figures
import Foundation
import LabStore
import ReadingRows
import Readings
import Report
import SessionLog

/// The report's part of `bench lab`: gathered and drawn (read, count, draw, as `bench report`
/// times it) on the merged log and on the store, the fastest of `runs` each.
struct ReportTimes: Encodable {
    var secondsStore: Double
    var secondsMergedLog: Double
    /// Store over merged log: the goal is at most 2.
    var ratio: Double
    var trials: Int
    var bytes: Int
    /// Whether both gave the same HTML, made at the same time.
    var sameHtml: Bool
}

/// `stats --familiar-novel` on the store against the merged log, the fastest of `runs` each.
struct FamiliarNovelTimes: Encodable {
    var secondsStore: Double
    var secondsMergedLog: Double
    var ratio: Double
    var dogs: Int
    var sameRows: Bool
}

extension BenchLab {
    /// `filter`: the whole store, or one selection (the report's other path: trials joined to
    /// their sessions, each with whether the selection chose it).
    func timeReports(_ reader: LogReader, _ researcher: LabConnection, _ filter: LogFilter = LogFilter()) throws
        -> ReportTimes
    {
        var best = (store: Double.infinity, log: Double.infinity)
        var same = true
        var bytes = 0
        var trials = 0
        for _ in 0..<max(1, runs) {
            var start = ContinuousClock.now
            var onLog = try reader.report(filter)
            let logHTML = ReportHTML.render(onLog, scope: "all dogs")
            best.log = min(best.log, start.duration(to: .now).seconds)
            start = ContinuousClock.now
            // Opened, read through the readings' row interface (as `report --lab` reads), closed.
            let lab = try waitFor { try await LabReader.open(researcher) }
            var onStore: ReportData
            do { onStore = try lab.report(filter) } catch {
                _ = try? waitFor { await lab.close() }
                throw error
            }
            _ = try? waitFor { await lab.close() }
            let storeHTML = ReportHTML.render(onStore, scope: "all dogs")
            best.store = min(best.store, start.duration(to: .now).seconds)
            // Compared as made at one time: the only line that differs by when it ran.
            onLog.generated = ""
            onStore.generated = ""
            same =
                same && ReportHTML.render(onLog, scope: "all dogs") == ReportHTML.render(onStore, scope: "all dogs")
            bytes = logHTML.utf8.count
            trials = onLog.trials
            withExtendedLifetime(storeHTML) {}
        }
        return ReportTimes(
            secondsStore: best.store, secondsMergedLog: best.log, ratio: (best.store / best.log * 100).rounded() / 100,
            trials: trials, bytes: bytes, sameHtml: same)
    }
}

extension BenchLab {
    func timeFamiliarNovel(_ reader: LogReader, _ researcher: LabConnection) throws -> FamiliarNovelTimes {
        var best = (store: Double.infinity, log: Double.infinity)
        var same = true
        var dogs = 0
        for _ in 0..<max(1, runs) {
            var start = ContinuousClock.now
            let onLog = try reader.familiarNovelStats()
            best.log = min(best.log, start.duration(to: .now).seconds)
            start = ContinuousClock.now
            // Opened, read through the readings' row interface (as `stats --lab` reads), closed.
            let lab = try waitFor { try await LabReader.open(researcher) }
            let onStore: [FamiliarNovelRow]
            do { onStore = try lab.familiarNovelStats() } catch {
                _ = try? waitFor { await lab.close() }
                throw error
            }
            _ = try? waitFor { await lab.close() }
            best.store = min(best.store, start.duration(to: .now).seconds)
            same = same && onStore == onLog
            dogs = onLog.count
        }
        return FamiliarNovelTimes(
            secondsStore: best.store, secondsMergedLog: best.log, ratio: (best.store / best.log * 100).rounded() / 100,
            dogs: dogs, sameRows: same)
    }
}
