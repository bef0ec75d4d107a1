import Foundation

// The watch stream's vocabulary (issue 34): every line lineupd sends a watcher is one of these
// kinds, written and read by this one definition (lineupd writes; `lineupctl watch`, lineup-web's
// live stream and lineup-alerts read). On the wire each is one JSON object of string values (numbers
// in decimal, as the page's JavaScript reads them), keys in the order of their UTF-8 bytes;
// docs/daemon.md, "The watch stream", lists every kind and field.

/// One line of the watch stream.
public enum WatchEvent: Sendable, Hashable {
    /// An event written to the log (edge, sniff, indication, click, button, cue, fault, note,
    /// feeder), as the handler's side may see it (`Visibility`).
    case station(StationEvent)
    /// A trial is over: its line (in a running double-blind session, only that it is over).
    case trial(line: String)
    /// A double-blind session is over: its head line, then each trial's full line.
    case revealed(line: String)
    /// A double-blind trial's layout commitment, before the trial starts.
    case committed(trial: Int, sha256: String)
    /// A trial's (or round's) search began: its time, as `status` counts it down.
    case timer(trial: Int, secondsLeft: Double, endsMonoNs: UInt64)
    case sessionStart(session: String, dog: String)
    /// A session cut short was resumed; `trial` is the next to run.
    case sessionResume(session: String, dog: String, trial: Int)
    case sessionEnd(session: String)
    /// The dog passed a step (`step` non-empty) or graduated a phase.
    case milestone(dog: String, phase: String, step: String, criterion: String)
    /// The log stopped taking writes, and why.
    case logPaused(why: String)
    /// The log takes writes again.
    case logWritable

    /// The kinds, as the lines name them.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        case edge, sniff, indication, click, button, cue, fault, note, feeder
        case trial, revealed, committed, timer
        case sessionStart = "session-start"
        case sessionResume = "session-resume"
        case sessionEnd = "session-end"
        case milestone
        case logPaused = "log-paused"
        case logWritable = "log-writable"
    }

    /// An event of the log on the watch stream.
    public struct StationEvent: Sendable, Hashable {
        /// One of the log's event kinds (`edge` ... `feeder`).
        public var kind: Kind
        /// When it happened, on the station's monotonic clock.
        public var monoNs: Int64
        /// The station's name (its letter or number); withheld while a double-blind session runs,
        /// except a sensor fault's.
        public var station: String?
        public var value: Int64?
        public var durationNs: Int64?
        /// A click's latency from its edge to the sound's onset.
        public var onsetLatencyNs: Int64?
        /// The log's detail (a JSON object as text); withheld while a double-blind session runs,
        /// except a cue's and a fault's.
        public var detail: String?
        /// The trial (1-based) it happened in, if any.
        public var trial: Int?
        /// A fault's name (`unreadable`, `stuck`, a sound fault's).
        public var fault: String?

        public init(
            kind: Kind, monoNs: Int64, station: String? = nil, value: Int64? = nil, durationNs: Int64? = nil,
            onsetLatencyNs: Int64? = nil, detail: String? = nil, trial: Int? = nil, fault: String? = nil
        ) {
            self.kind = kind
            self.monoNs = monoNs
            self.station = station
            self.value = value
            self.durationNs = durationNs
            self.onsetLatencyNs = onsetLatencyNs
            self.detail = detail
            self.trial = trial
            self.fault = fault
        }
    }

    /// The log's event kinds, as the stream names them.
    public static let stationKinds: [Kind] = [
        .edge, .sniff, .indication, .click, .button, .cue, .fault, .note, .feeder,
    ]

    public var kind: Kind {
        switch self {
        case .station(let event): event.kind
        case .trial: .trial
        case .revealed: .revealed
        case .committed: .committed
        case .timer: .timer
        case .sessionStart: .sessionStart
        case .sessionResume: .sessionResume
        case .sessionEnd: .sessionEnd
        case .milestone: .milestone
        case .logPaused: .logPaused
        case .logWritable: .logWritable
        }
    }

    /// The line's fields, as written.
    public var fields: [String: String] {
        var f: [String: String] = [:]
        switch self {
        case .station(let e):
            f["mono_ns"] = "\(e.monoNs)"
            f["station"] = e.station
            f["value"] = e.value.map { "\($0)" }
            f["duration_ns"] = e.durationNs.map { "\($0)" }
            f["onset_latency_ns"] = e.onsetLatencyNs.map { "\($0)" }
            f["detail"] = e.detail
            f["trial"] = e.trial.map { "\($0)" }
            f["fault"] = e.fault
        case .trial(let line), .revealed(let line):
            f["line"] = line
        case .committed(let trial, let sha256):
            f["trial"] = "\(trial)"
            f["sha256"] = sha256
        case .timer(let trial, let secondsLeft, let endsMonoNs):
            f["trial"] = "\(trial)"
            f["seconds_left"] = "\(secondsLeft)"
            f["ends_mono_ns"] = "\(endsMonoNs)"
        case .sessionStart(let session, let dog):
            f["session"] = session
            f["dog"] = dog
        case .sessionResume(let session, let dog, let trial):
            f["session"] = session
            f["dog"] = dog
            f["trial"] = "\(trial)"
        case .sessionEnd(let session):
            f["session"] = session
        case .milestone(let dog, let phase, let step, let criterion):
            f["dog"] = dog
            f["phase"] = phase
            f["step"] = step
            f["criterion"] = criterion
        case .logPaused(let why):
            f["why"] = why
        case .logWritable:
            break
        }
        f["kind"] = kind.rawValue
        return f
    }

    /// The line as lineupd sends it (no newline).
    public var line: String { jsonObject(fields) }

    /// Reads one line of the stream.
    public init(line: String) throws(WatchEventError) {
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: Data(line.utf8))
        } catch {
            throw WatchEventError(line: line, problem: "it is not JSON")
        }
        guard let fields = object as? [String: String] else {
            throw WatchEventError(line: line, problem: "it is not one JSON object of string values")
        }
        try self.init(fields: fields, line: line)
    }

    /// Reads one line's fields; `line` names it in an error.
    public init(fields: [String: String], line: String? = nil) throws(WatchEventError) {
        let line = line ?? jsonObject(fields)
        func text(_ key: String) throws(WatchEventError) -> String {
            guard let value = fields[key] else { throw WatchEventError(line: line, problem: "it has no \(key)") }
            return value
        }
        func number<N: LosslessStringConvertible>(_ key: String, _: N.Type) throws(WatchEventError) -> N {
            guard let value = N(try text(key)) else {
                throw WatchEventError(line: line, problem: "its \(key) is not a number: \(fields[key] ?? "")")
            }
            return value
        }
        func optional<N: LosslessStringConvertible>(_ key: String, _ type: N.Type) throws(WatchEventError) -> N? {
            fields[key] == nil ? nil : try number(key, type)
        }
        guard let name = fields["kind"] else { throw WatchEventError(line: line, problem: "it has no kind") }
        guard let kind = Kind(rawValue: name) else {
            throw WatchEventError(line: line, problem: "its kind \(name) is none of this lineupctl's")
        }
        switch kind {
        case .edge, .sniff, .indication, .click, .button, .cue, .fault, .note, .feeder:
            self = .station(
                StationEvent(
                    kind: kind, monoNs: try number("mono_ns", Int64.self), station: fields["station"],
                    value: try optional("value", Int64.self), durationNs: try optional("duration_ns", Int64.self),
                    onsetLatencyNs: try optional("onset_latency_ns", Int64.self), detail: fields["detail"],
                    trial: try optional("trial", Int.self), fault: fields["fault"]))
        case .trial: self = .trial(line: try text("line"))
        case .revealed: self = .revealed(line: try text("line"))
        case .committed: self = .committed(trial: try number("trial", Int.self), sha256: try text("sha256"))
        case .timer:
            self = .timer(
                trial: try number("trial", Int.self), secondsLeft: try number("seconds_left", Double.self),
                endsMonoNs: try number("ends_mono_ns", UInt64.self))
        case .sessionStart: self = .sessionStart(session: try text("session"), dog: try text("dog"))
        case .sessionResume:
            self = .sessionResume(
                session: try text("session"), dog: try text("dog"), trial: try number("trial", Int.self))
        case .sessionEnd: self = .sessionEnd(session: try text("session"))
        case .milestone:
            self = .milestone(
                dog: try text("dog"), phase: try text("phase"), step: try text("step"), criterion: try text("criterion")
            )
        case .logPaused: self = .logPaused(why: try text("why"))
        case .logWritable: self = .logWritable
        }
    }
}

/// A watch line that is not one of the stream's kinds, or lacks what its kind needs.
public struct WatchEventError: Error, Sendable, Hashable, CustomStringConvertible {
    public var line: String
    public var problem: String
    public var description: String { "lineupd sent a watch line this lineupctl cannot read (\(problem)): \(line)" }
}

/// A JSON object of string values, for the `detail` column and the watch lines: keys in the
/// order of their UTF-8 bytes, text escaped as JSONSerialization escapes it (`/` too).
///
/// Written here, not by JSONSerialization: its `.sortedKeys` compares keys with the locale's
/// collator, which opens ICU's collation data at the daemon's first session and keeps it
/// resident (and locked, `mlockall`) for good: `lineup-bench click --clicks 1 --storm 0` peaked
/// 2.2 MB lower without it (debug build, 47.6 → 45.4 MB). The keys are the station's own
/// snake_case names, for which byte order is the order JSONSerialization gave
/// (`JSONObjectTests`).
public func jsonObject(_ fields: [String: String]) -> String {
    var out = "{"
    for (index, key) in fields.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }).enumerated() {
        if index > 0 { out += "," }
        appendJSONString(key, to: &out)
        out += ":"
        appendJSONString(fields[key] ?? "", to: &out)
    }
    return out + "}"
}

private func appendJSONString(_ text: String, to out: inout String) {
    out += "\""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "/": out += "\\/"
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        case "\u{8}": out += "\\b"
        case "\u{C}": out += "\\f"
        case _ where scalar.value < 0x20:
            let hex = String(scalar.value, radix: 16)
            out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
        default: out.unicodeScalars.append(scalar)
        }
    }
    out += "\""
}
