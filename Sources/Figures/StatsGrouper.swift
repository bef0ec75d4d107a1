import TrainingEngine

/// How `stats` groups trials.
public enum StatsGrouping: String, Sendable, CaseIterable, Codable {
    case dog, session, sample, station
}

/// The figures of one group, as `Tally` computes them (Figures/Figures.swift: the one
/// definition of every figure). In JSON the figures' keys sit beside `group` and `groupId`.
///
/// Trial counts: for `dog` and `session`, each trial once; for `sample` and `station`,
/// each trial in which that sample or station stood in the lineup, with the latency of that
/// station's first indication. Aborted trials count in `results.aborted` only.
public struct StatsRow: Sendable, Hashable, Codable {
    public var group: String
    public var groupId: String
    /// By session: when it started (ISO 8601, the station's local offset).
    public var started: String?
    /// By sample: its kind (target, control, distractor, blank), which says which of the
    /// station-level verdicts its row can hold.
    public var kind: SampleKind?
    public var figures: Figures
    /// Sessions (ids) with scored trials logged before the log kept what each station saw:
    /// their trials count in `results`, never in a station-level figure.
    public var sessionsWithoutStationData: [String]
    /// By sample: `SampleFlag`'s verdict on it against the others of its kind (nil for a
    /// blank, or a sample alone of its kind).
    public var sampleFlag: SampleFlag.Verdict? = nil
    /// By station: its number and name (`StationNames`); `group` is `station B`, `groupId` `2:B`.
    public var station: NamedStation? = nil

    public var results: OutcomeCounts { figures.results }
    public var sensitivity: Proportion { figures.sensitivity }
    public var specificity: Proportion { figures.specificity }

    private enum Keys: String, CodingKey {
        case group, groupId, started, kind, sessionsWithoutStationData, sampleFlag, stationNumber, stationName
    }

    public init(
        group: String, groupId: String, started: String? = nil, kind: SampleKind? = nil, figures: Figures,
        sessionsWithoutStationData: [String] = []
    ) {
        self.group = group
        self.groupId = groupId
        self.started = started
        self.kind = kind
        self.figures = figures
        self.sessionsWithoutStationData = sessionsWithoutStationData
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        group = try c.decode(String.self, forKey: .group)
        groupId = try c.decode(String.self, forKey: .groupId)
        started = try c.decodeIfPresent(String.self, forKey: .started)
        kind = try c.decodeIfPresent(SampleKind.self, forKey: .kind)
        sessionsWithoutStationData = try c.decode([String].self, forKey: .sessionsWithoutStationData)
        sampleFlag = try c.decodeIfPresent(SampleFlag.Verdict.self, forKey: .sampleFlag)
        if let number = try c.decodeIfPresent(Int.self, forKey: .stationNumber) {
            station = NamedStation(number: number, name: try c.decode(String.self, forKey: .stationName))
        }
        figures = try Figures(from: decoder)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        try c.encode(group, forKey: .group)
        try c.encode(groupId, forKey: .groupId)
        try c.encodeIfPresent(started, forKey: .started)
        try c.encodeIfPresent(kind, forKey: .kind)
        try c.encode(sessionsWithoutStationData, forKey: .sessionsWithoutStationData)
        try c.encodeIfPresent(sampleFlag, forKey: .sampleFlag)
        try c.encodeIfPresent(station?.number, forKey: .stationNumber)
        try c.encodeIfPresent(station?.name, forKey: .stationName)
        try figures.encode(to: encoder)
    }
}

/// One group's running counts.
private struct Group {
    var name: String
    var started: Int64 = .max
    var kind: SampleKind?
    var station: NamedStation?
    var tally = Tally()
    var sessionsWithoutStationData: Set<String> = []
}

/// The grouping of `stats`: trials in, one row per group out, each counted by `Tally`. Fed by
/// whichever source scans the trials (the station's log here, the lab store in LabStore), so
/// the two give the same rows from the same trials: one definition, one implementation.
public struct StatsGrouper {
    public let grouping: StatsGrouping
    /// Sample id to label, for the rows of `--by sample`.
    let labels: [String: String]
    private var groups: [String: Group] = [:]
    /// By station: each session's names, read from its settings at its first trial.
    private var names: [String: StationNames] = [:]

    public init(by grouping: StatsGrouping, sampleLabels: [String: String] = [:]) {
        self.grouping = grouping
        labels = sampleLabels
    }

    /// Whether the scan must read sample ids (it skips them otherwise, for speed).
    public var needsSamples: Bool { grouping == .sample }
    /// Whether the scan must hand over each session's settings (`TrialContext.sessionSettings`),
    /// which name its stations.
    public var needsSettings: Bool { grouping == .station }

    public mutating func add(_ trial: ScoredTrial, _ context: TrialContext) {
        // Copies: the closures below must not read `self` while `group` modifies it.
        let grouping = self.grouping
        let labels = self.labels
        let lacking = trial.outcome != .aborted && !trial.hasStationData
        switch grouping {
        case .dog, .session:
            let key = grouping == .dog ? context.dogId : context.sessionId
            group(key, grouping == .dog ? context.dog : "\(context.dog) \(key)") { g in
                g.tally.add(trial)
                g.started = min(g.started, context.sessionWallNs)
                if lacking { g.sessionsWithoutStationData.insert(context.sessionId) }
            }
        case .station:
            if names[context.sessionId] == nil {
                names[context.sessionId] = StationNames(
                    settings: context.sessionSettings, numbers: trial.stations.map(\.station))
            }
            let names = names[context.sessionId]!
            for station in trial.stations {
                let named = names.station(station.station)
                group(named.id, "station \(named.name)") { g in
                    g.station = named
                    g.tally.add(trial, station: station)
                    if lacking { g.sessionsWithoutStationData.insert(context.sessionId) }
                }
            }
        case .sample:
            for station in trial.stations {
                guard let key = station.sample, !key.isEmpty else { continue }
                group(key, labels[key] ?? key) { g in
                    g.kind = g.kind ?? station.kind
                    g.tally.add(trial, station: station)
                    if lacking { g.sessionsWithoutStationData.insert(context.sessionId) }
                }
            }
        }
    }

    private mutating func group(_ key: String, _ name: @autoclosure () -> String, _ update: (inout Group) -> Void) {
        if groups[key] == nil { groups[key] = Group(name: name()) }
        update(&groups[key]!)
    }

    /// The rows, in `stats`' order.
    public func rows() -> [StatsRow] {
        var iso = ISOTimeFormatter()
        var rows = groups.map { key, g in
            var row = StatsRow(
                group: g.name, groupId: key,
                started: grouping == .session ? iso.string(wallNs: g.started) : nil, kind: g.kind,
                figures: g.tally.figures,
                sessionsWithoutStationData: g.sessionsWithoutStationData.sorted())
            row.station = g.station
            return row
        }
        if grouping == .sample {
            let flags = SampleFlag.judge(rows.compactMap { r in r.kind.map { (r.groupId, $0, r.figures) } })
            for i in rows.indices { rows[i].sampleFlag = flags[rows[i].groupId] }
        }
        return rows.sorted { a, b in
            switch grouping {
            case .station:
                return (a.station ?? NamedStation(number: 0, name: ""))
                    < (b.station ?? NamedStation(number: 0, name: ""))
            case .session:
                // Oldest first, as a learning curve reads; the id breaks ties.
                return (a.started ?? "", a.groupId) < (b.started ?? "", b.groupId)
            default:
                return (a.group, a.groupId) < (b.group, b.groupId)
            }
        }
    }
}

/// Where a scanned trial belongs.
public struct TrialContext: Sendable {
    public var dogId: String
    public var dog: String
    public var sessionId: String
    public var sessionWallNs: Int64
    /// The session's settings JSON, which name its stations (`StationNames`); read only where
    /// the grouping asks (`StatsGrouper.needsSettings`).
    public var sessionSettings: String?
    /// The trial's number in its session, where the reader has it (the report's staircase
    /// track marks reversals by it).
    public var trialNumber: Int?

    public init(
        dogId: String, dog: String, sessionId: String, sessionWallNs: Int64, sessionSettings: String? = nil,
        trialNumber: Int? = nil
    ) {
        self.dogId = dogId
        self.dog = dog
        self.sessionId = sessionId
        self.sessionWallNs = sessionWallNs
        self.sessionSettings = sessionSettings
        self.trialNumber = trialNumber
    }
}
