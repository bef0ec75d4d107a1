import Logging
import StationLogging

/// lineupd's components, each speaking through its own logger (see `StationLogging`): one line
/// per message, `lineupd: …` on a terminal, `<priority>[component] …` in the journal.
public enum Log {
    /// Start-up, configuration, signals, the station as a whole.
    public static let station = StationLogging.logger("station")
    /// The sound card and the click (ALSA's own messages are folded into its lines).
    public static let audio = StationLogging.logger("audio")
    /// The session log: writes, spools, sessions left unfinished.
    public static let sessionLog = StationLogging.logger("log")
    /// The stations' sensors: stuck, silent, active at a start.
    public static let sensors = StationLogging.logger("sensors")
    /// The control socket and its group.
    public static let control = StationLogging.logger("control")
}
