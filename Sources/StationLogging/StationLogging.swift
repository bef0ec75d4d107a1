import Foundation
import Logging

/// The station's logging set-up: one swift-log `Logger` per component, each message one line on
/// stderr, the only place the tools write to stderr.
///
/// On a terminal a line reads `lineupd: message` (`lineupctl: message`), as a person expects
/// of a Unix tool. Under systemd (stderr connected to the journal: `$JOURNAL_STREAM` set) it
/// reads `<4>[audio] message`: journald takes the `<N>` prefix as the syslog priority
/// (SyslogLevelPrefix=, on by default), so `journalctl -p warning -u lineupd` filters by level,
/// and the component names what spoke. `$LINEUP_LOG_LEVEL` (trace, debug, info, notice,
/// warning, error, critical; default info) sets the threshold.
public enum StationLogging {
    /// The program's name, for terminal lines.
    nonisolated(unsafe) private static var program = "lineup"
    private static let once: Void = {
        LoggingSystem.bootstrap { label in StationLogHandler(component: label) }
    }()

    /// Installs the station's handler; call once, first thing. Later calls do nothing.
    public static func bootstrap(program: String) {
        Self.program = program
        _ = once
    }

    static var programName: String { program }

    /// The component loggers.
    public static func logger(_ component: String) -> Logger { Logger(label: component) }
}

/// Formats and writes one line per message (see `StationLogging`).
public struct StationLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level
    let component: String
    let journal: Bool

    public init(component: String, environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.component = component
        journal = environment["JOURNAL_STREAM"] != nil
        logLevel = environment["LINEUP_LOG_LEVEL"].flatMap { Logger.Level(rawValue: $0.lowercased()) } ?? .info
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        let line = Self.format(
            event.message.description, level: event.level, component: component, journal: journal,
            program: StationLogging.programName)
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }

    /// One line: a message of several lines is joined, so the journal keeps it whole.
    public static func format(
        _ message: String, level: Logger.Level, component: String, journal: Bool, program: String
    ) -> String {
        let text = message.split(whereSeparator: \.isNewline).joined(separator: " ")
        guard journal else { return "\(program): \(text)" }
        return "<\(syslogPriority(level))>[\(component)] \(text)"
    }

    /// syslog(3) priorities, as journald reads them.
    public static func syslogPriority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: return 7
        case .info: return 6
        case .notice: return 5
        case .warning: return 4
        case .error: return 3
        case .critical: return 2
        }
    }
}
