// A step's set-up and criterion in the trainer's words: one implementation, so the program
// listing, the station's screens and the report all say the same thing.

extension LineupSetup {
    /// What stands in the lineup, as the loading assistant would say it:
    /// "target + 1 empty container", "target + 4 controls, 1 trial in 10 without target".
    public var inWords: String {
        var parts: [String] = []
        if targets > 0 { parts.append("target") }
        if controls > 0 { parts.append(Self.count(controls, "control")) }
        if distractors > 0 { parts.append(Self.count(distractors, "distractor")) }
        if blanks > 0 { parts.append(Self.count(blanks, "empty container")) }
        var text: String
        switch (targets, parts.count) {
        case (_, 0): text = "no container"
        case (1, 1): text = "target alone"
        case (0, _): text = "no target: " + parts.joined(separator: " + ")
        default: text = parts.joined(separator: " + ")
        }
        if targets > 0, noTargetShare > 0 { text += ", " + Self.targetFreeShare(noTargetShare) }
        return text
    }

    /// "1 trial in 10 without target" when the share is one in a whole number of trials (as
    /// trainers count), else a percentage.
    static func targetFreeShare(_ share: Double) -> String {
        if share >= 1 { return "no trial with a target" }
        let oneIn = (1 / share).rounded()
        if oneIn >= 2, abs(1 / oneIn - share) < 1e-9 { return "1 trial in \(Int(oneIn)) without target" }
        let percent = share * 100
        let shown =
            abs(percent - percent.rounded()) < 1e-9 ? "\(Int(percent.rounded()))" : "\((percent * 10).rounded() / 10)"
        return "\(shown) % of trials without target"
    }

    static func count(_ n: Int, _ noun: String) -> String {
        "\(n) \(noun)\(n == 1 ? "" : "s")"
    }
}
