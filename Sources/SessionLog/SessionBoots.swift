import Foundation
import GRDB

/// The detail of the `note` event a resume logs (docs/session-log.md, "A session across
/// boots"): the boot the session went on in, and its first trial (or round) run there. The
/// trial cut short before it belongs to the boot it ran in, not this one.
public struct ResumedDetail: Codable, Sendable, Hashable {
    public var resumed = true
    /// `/proc/sys/kernel/random/boot_id` where lineupd resumed it; nil where there is none.
    public var bootId: String?
    public var firstTrial: Int
    /// The stations (the log's numbers) active as lineupd went on: the levels the re-scorer
    /// takes from then (nil: none said, none active).
    public var active: [Int]?

    public init(bootId: String?, firstTrial: Int, active: [Int]? = nil) {
        self.bootId = bootId
        self.firstTrial = firstTrial
        self.active = active
    }

    enum CodingKeys: String, CodingKey {
        case resumed, active
        case bootId = "boot_id"
        case firstTrial = "first_trial"
    }
}

/// Which boot each trial of a session ran in: monotonic times (`mono_ns`) compare only
/// within one boot, and a resumed session can span several (docs/figures.md, "Committed
/// layouts", says the rule). The session starts in its row's `boot_id`; each resume's `note`
/// (`ResumedDetail`) says from which trial on it ran in another. A later resume is a later
/// boot: the log is append-only, and a resume is logged after everything before it.
public struct SessionBoots: Sendable, Hashable {
    /// The boot the session started in, and logged its commitments in (nil: not recorded).
    public var start: String?
    /// Each resume in the log's order: from `firstTrial` on, trials ran in `bootId`.
    public var resumes: [ResumedDetail]

    public init(start: String?, resumes: [ResumedDetail]) {
        self.start = start
        self.resumes = resumes
    }

    /// The boot trial `number` ran in (nil: not recorded).
    public func boot(ofTrial number: Int) -> String? {
        resumes.last { $0.firstTrial <= number }.map(\.bootId) ?? start
    }

    /// Whether trial `number` ran in a boot after the session's first: known only when both
    /// boots are recorded and differ. Unknown is taken as the same boot, so monotonic times are
    /// compared as they always were (a log without boot ids is judged as before).
    public func ranInLaterBoot(trial number: Int) -> Bool {
        guard let start, let boot = boot(ofTrial: number) else { return false }
        return boot != start
    }
}

extension LogReader {
    /// The session's boots as the log records them.
    static func sessionBoots(_ db: Database, session: String) throws -> SessionBoots {
        let start = try String.fetchOne(db, sql: "SELECT boot_id FROM session WHERE id = ?", arguments: [session])
        let details = try String.fetchAll(
            db,
            sql: """
                SELECT detail FROM event WHERE session_id = ? AND trial_id IS NULL AND kind = 'note'
                AND detail LIKE '%"resumed":true%' ORDER BY seq
                """, arguments: [session])
        let resumes = details.compactMap { try? EventDetail.decode(ResumedDetail.self, from: $0) }
        return SessionBoots(start: start, resumes: resumes)
    }
}
