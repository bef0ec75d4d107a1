import Glibc

/// Something the station's hardware could not do, with what a person needs to act on it.
public struct StationIOError: Error, Sendable, CustomStringConvertible {
    public enum Code: Sendable, Hashable {
        /// A configured line or chip was not found, or could not be requested.
        case gpio
        /// The audio device could not be opened or set up as asked.
        case audio
        /// A system call failed (pipe, poll, thread set-up).
        case system
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    static func system(_ what: String, errno err: Int32 = errno) -> StationIOError {
        StationIOError(.system, "\(what): \(String(cString: strerror(err)))")
    }

    public var description: String { message }
}
