// The trainer's and researcher's words, shared by the engine, the log and the tools.

/// What a scent sample is, as the loading assistant and the researcher call it.
public enum SampleKind: String, Sendable, Hashable, Codable, CaseIterable {
    /// Holds the scent the dog is trained to find.
    case target
    /// A sample from the same kind of source without the target condition.
    case control
    /// A clean, empty container.
    case blank
    /// An unrelated odour meant to tempt the dog.
    case distractor
}

/// What an event of the station's record is (`events --kind`).
public enum EventKind: String, Sendable, Hashable, Codable, CaseIterable {
    /// A raw sensor edge with the kernel's timestamp; `value` is the new level.
    case edge
    /// A short nose visit at a station; `durationNs` is its length.
    case sniff
    /// The agreed behaviour held long enough at a station.
    case indication
    /// The click sounded; the click fields carry its timing.
    case click
    /// A button press (clicker, error, ready); `value` is the button number.
    case button
    /// A cue sounded (start, end).
    case cue
    /// Something went wrong (dropped edges, ALSA underrun, queue overflow).
    case fault
    /// Free text from the trainer or the station.
    case note
    /// The feeder's line pulsed after a click: `kernelNs` when it went on, `durationNs` how
    /// long it was on (`FeederDetail`).
    case feeder
}

/// How a session is run.
public enum TrainingMode: String, Sendable, Hashable, Codable, CaseIterable {
    /// The trainer presses the clicker; the station times, cues and records.
    case trainerLed = "trainer-led"
    /// The station picks layouts and clicks by itself; the handler may know the layout.
    case automated
    /// As automated, and the handler is never shown the layout.
    case doubleBlind = "double-blind"
}

/// How one trial ended.
public enum TrialOutcome: String, Sendable, Hashable, Codable, CaseIterable {
    /// The dog indicated the target.
    case hit
    /// The dog indicated a station without the target.
    case falseAlert = "false-alert"
    /// A target was present and nothing was indicated in time.
    case miss
    /// No target was present and nothing was indicated.
    case correctRejection = "correct-rejection"
    /// Stopped by the trainer, a command or shutdown before it could be scored.
    case aborted

    /// Whether the trial counts as correct for graduation criteria.
    public var isCorrect: Bool { self == .hit || self == .correctRejection }
}
