import Foundation
import GRDB

/// The log's schema, as named, versioned migrations.
///
/// A migration that has shipped is never edited (GRDB's Migrations guide): a later
/// change is a new migration appended below, so every station's database can be
/// brought forward from whatever version it holds.
enum Schema {
    /// Identifiers of the migrations this build knows, oldest first.
    static var knownVersions: [String] { migrator.migrations }

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1", migrate: v1)
        migrator.registerMigration("v2-session-end", migrate: v2)
        migrator.registerMigration("v3-station-seen", migrate: v3)
        migrator.registerMigration("v4-station-identity", migrate: v4)
        migrator.registerMigration("v5-dog-note", migrate: v5)
        migrator.registerMigration("v6-layout-commitment", migrate: layoutCommitment)
        migrator.registerMigration("v7-sample-limits-novelty", migrate: sampleLimitsAndNovelty)
        migrator.registerMigration("v8-handler-guess", migrate: handlerGuess)
        migrator.registerMigration("v9-one-current-correction", migrate: oneCurrentCorrection)
        migrator.registerMigration("v10-lab-sample-uses", migrate: labSampleUses)
        migrator.registerMigration("v11-sample-dilution", migrate: sampleDilution)
        migrator.registerMigration("v12-session-conditions", migrate: sessionConditions)
        migrator.registerMigration("v13-trial-procedure", migrate: trialProcedure)
        return migrator
    }

    static let appendOnlyTables = [
        "dog", "handler", "sample", "sample_note", "program", "session", "session_note",
        "trial", "trial_station", "event", "milestone",
    ]

    /// Every table carries `id` (a UUID as lower-case text, so logs from several
    /// stations merge without clashes), `mono_ns` (CLOCK_MONOTONIC of the station that
    /// wrote it) and `wall_ns` (UTC nanoseconds since 1970). Tables are append-only:
    /// triggers refuse UPDATE and DELETE, and a correction is a new row that refers
    /// to the old one (`trial.corrects`).
    private static func v1(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE dog (
                    id TEXT PRIMARY KEY NOT NULL,
                    name TEXT NOT NULL,
                    born TEXT,
                    notes TEXT,
                    mono_ns INTEGER NOT NULL,
                    wall_ns INTEGER NOT NULL);

                -- Handlers are pseudonymous: a code, nothing personal.
                CREATE TABLE handler (
                    id TEXT PRIMARY KEY NOT NULL,
                    code TEXT NOT NULL UNIQUE,
                    mono_ns INTEGER NOT NULL,
                    wall_ns INTEGER NOT NULL);

                -- `label` is the id written on the physical sample.
                CREATE TABLE sample (
                    id TEXT PRIMARY KEY NOT NULL,
                    label TEXT NOT NULL UNIQUE,
                    kind TEXT NOT NULL CHECK (kind IN ('target', 'control', 'blank', 'distractor')),
                    diagnosis TEXT,
                    source TEXT,
                    collection TEXT,
                    processing TEXT,
                    collected_on TEXT,
                    mono_ns INTEGER NOT NULL,
                    wall_ns INTEGER NOT NULL);

                CREATE TABLE sample_note (
                    id TEXT PRIMARY KEY NOT NULL,
                    sample_id TEXT NOT NULL REFERENCES sample(id),
                    text TEXT NOT NULL,
                    mono_ns INTEGER NOT NULL,
                    wall_ns INTEGER NOT NULL);
                CREATE INDEX sample_note_by_sample ON sample_note(sample_id);

                CREATE TABLE program (
                    id TEXT PRIMARY KEY NOT NULL,
                    name TEXT NOT NULL,
                    content TEXT NOT NULL,
                    sha256 TEXT NOT NULL UNIQUE,
                    mono_ns INTEGER NOT NULL,
                    wall_ns INTEGER NOT NULL);

                -- `phase_steps` is how many steps the phase has in its program, kept so
                -- progress can be shown without parsing the program.
                CREATE TABLE session (
                    id TEXT PRIMARY KEY NOT NULL,
                    dog_id TEXT NOT NULL REFERENCES dog(id),
                    handler_id TEXT REFERENCES handler(id),
                    program_id TEXT REFERENCES program(id),
                    phase TEXT,
                    phase_steps INTEGER,
                    step TEXT,
                    exercise TEXT,
                    mode TEXT NOT NULL CHECK (mode IN ('trainer-led', 'automated', 'double-blind')),
                    settings TEXT NOT NULL DEFAULT '{}',
                    station TEXT,
                    boot_id TEXT,
                    mono_ns INTEGER NOT NULL,
                    wall_ns INTEGER NOT NULL);
                CREATE INDEX session_by_dog ON session(dog_id, wall_ns);

                -- Improvement suggestions and comments, written after the session.
                CREATE TABLE session_note (
                    id TEXT PRIMARY KEY NOT NULL,
                    session_id TEXT NOT NULL REFERENCES session(id),
                    kind TEXT NOT NULL CHECK (kind IN ('improvement', 'comment')),
                    text TEXT NOT NULL,
                    mono_ns INTEGER NOT NULL,
                    wall_ns INTEGER NOT NULL);
                CREATE INDEX session_note_by_session ON session_note(session_id);

                -- One row per trial, written when its outcome is known; `mono_ns` and
                -- `wall_ns` are its end, `started_*` its start cue.
                CREATE TABLE trial (
                    id TEXT PRIMARY KEY NOT NULL,
                    session_id TEXT NOT NULL REFERENCES session(id),
                    number INTEGER NOT NULL,
                    seed INTEGER,
                    outcome TEXT NOT NULL
                        CHECK (outcome IN ('hit', 'false-alert', 'miss', 'correct-rejection', 'aborted')),
                    indicated_station INTEGER,
                    latency_ns INTEGER,
                    search_ns INTEGER,
                    started_mono_ns INTEGER NOT NULL,
                    started_wall_ns INTEGER NOT NULL,
                    corrects TEXT REFERENCES trial(id),
                    reason TEXT,
                    -- The layout again, compact (`station:kind:sample_id;...`), so that
                    -- statistics over 100,000 trials need no join with trial_station.
                    layout TEXT NOT NULL DEFAULT '',
                    mono_ns INTEGER NOT NULL,
                    wall_ns INTEGER NOT NULL);
                CREATE INDEX trial_by_session ON trial(session_id, number);
                CREATE INDEX trial_by_corrects ON trial(corrects) WHERE corrects IS NOT NULL;

                -- The layout: what stood in each station. A blank may have no sample.
                CREATE TABLE trial_station (
                    trial_id TEXT NOT NULL REFERENCES trial(id),
                    station INTEGER NOT NULL,
                    sample_id TEXT REFERENCES sample(id),
                    kind TEXT NOT NULL CHECK (kind IN ('target', 'control', 'blank', 'distractor')),
                    PRIMARY KEY (trial_id, station)) WITHOUT ROWID;
                CREATE INDEX trial_station_by_sample ON trial_station(sample_id);

                -- Raw and derived events. `seq` orders them on this station; no foreign
                -- keys, because events of a trial are written before its outcome row.
                CREATE TABLE event (
                    seq INTEGER PRIMARY KEY,
                    id TEXT NOT NULL,
                    session_id TEXT,
                    trial_id TEXT,
                    kind TEXT NOT NULL,
                    station INTEGER,
                    mono_ns INTEGER NOT NULL,
                    wall_ns INTEGER NOT NULL,
                    kernel_ns INTEGER,
                    value INTEGER,
                    duration_ns INTEGER,
                    click_edge_ns INTEGER,
                    click_handed_ns INTEGER,
                    click_trigger_ns INTEGER,
                    click_delay_frames INTEGER,
                    click_onset_latency_ns INTEGER,
                    detail TEXT);
                CREATE INDEX event_by_session ON event(session_id, seq);
                CREATE INDEX event_by_trial ON event(trial_id, seq);

                -- Steps passed and phases graduated (`step` NULL), as the engine's
                -- criteria decide.
                CREATE TABLE milestone (
                    id TEXT PRIMARY KEY NOT NULL,
                    dog_id TEXT NOT NULL REFERENCES dog(id),
                    session_id TEXT REFERENCES session(id),
                    phase TEXT NOT NULL,
                    step TEXT,
                    criterion TEXT,
                    mono_ns INTEGER NOT NULL,
                    wall_ns INTEGER NOT NULL);
                CREATE INDEX milestone_by_dog ON milestone(dog_id);

                -- Trials as they stand after corrections.
                CREATE VIEW trial_current AS
                    SELECT * FROM trial t
                    WHERE NOT EXISTS (SELECT 1 FROM trial c WHERE c.corrects = t.id);

                -- How often each sample has stood in a lineup (dogs learn single
                -- samples). A correction repeats its trial's layout, so it is not counted.
                CREATE VIEW sample_usage AS
                    SELECT s.id AS sample_id,
                        (SELECT count(*) FROM trial_station ts JOIN trial t ON t.id = ts.trial_id
                         WHERE ts.sample_id = s.id AND t.corrects IS NULL) AS uses
                    FROM sample s;
                """)
        for table in appendOnlyTables {
            try appendOnly(db, table)
        }
    }

    /// How each session ended. Without it a session cut short by a crash or a pulled plug
    /// looked like one the trainer ended after its last scored trial.
    /// - `ended`: by the trainer (`lineupctl session end`) or at the end of a simulated block;
    /// - `stopped`: lineupd was stopped (SIGTERM) during it, its running trial logged aborted;
    /// - `interrupted`: found unfinished when lineupd started again (a crash, a kill, a power
    ///   cut); a trial that was running then has raw events but no outcome;
    /// - `unknown`: sessions logged before this table existed.
    private static func v2(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE session_end (
                    id TEXT PRIMARY KEY NOT NULL,
                    session_id TEXT NOT NULL REFERENCES session(id),
                    how TEXT NOT NULL CHECK (how IN ('ended', 'stopped', 'interrupted', 'unknown')),
                    detail TEXT,
                    mono_ns INTEGER NOT NULL,
                    wall_ns INTEGER NOT NULL);
                CREATE INDEX session_end_by_session ON session_end(session_id);

                -- Sessions of an older log: how they ended was not recorded. Each gets a
                -- row of its own, so none is taken for interrupted at the next start.
                INSERT INTO session_end (id, session_id, how, detail, mono_ns, wall_ns)
                    SELECT lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' ||
                            substr(hex(randomblob(2)), 2) || '-' ||
                            substr('89ab', 1 + (abs(random()) % 4), 1) || substr(hex(randomblob(2)), 2) || '-' ||
                            hex(randomblob(6))),
                        s.id, 'unknown', 'logged before lineup recorded how sessions end',
                        s.mono_ns, s.wall_ns
                    FROM session s;
                """)
        try appendOnly(db, "session_end")
    }

    /// What each station saw in each trial: visited, indicated, when it was first indicated
    /// (from the start cue), how many sniffs, and the total time the nose spent there. Every
    /// station-level figure (sensitivity, specificity, ...) is counted from these, so a
    /// researcher can recompute them from the export. Columns are added, nothing is
    /// rewritten: trials of an older log keep NULL here and are reported as lacking the data.
    /// `trial.seen` repeats them compactly (`visited:indicated:first_ns:sniffs:dwell_ns;...`
    /// in station order) so statistics over 100,000 trials need no join.
    private static func v3(_ db: Database) throws {
        try db.execute(
            sql: """
                ALTER TABLE trial_station ADD COLUMN visited INTEGER CHECK (visited IN (0, 1));
                ALTER TABLE trial_station ADD COLUMN indicated INTEGER CHECK (indicated IN (0, 1));
                ALTER TABLE trial_station ADD COLUMN first_indication_ns INTEGER;
                ALTER TABLE trial_station ADD COLUMN sniffs INTEGER;
                ALTER TABLE trial_station ADD COLUMN dwell_ns INTEGER;
                ALTER TABLE trial ADD COLUMN seen TEXT;
                """)
    }

    /// Which station wrote each row, so several stations' logs merge into one (`lineupctl
    /// merge`): a stable id chosen when the log is first created here (not the boot id, which
    /// changes every start), kept in `log_identity`. `session.station_id` and
    /// `event.station_id` are NULL for this log's own rows and set on rows merged in from
    /// another station's log. Events get an index on their id, so a merge can skip the ones it
    /// already holds (`seq` is local to each log).
    private static func v4(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE log_identity (
                    id TEXT PRIMARY KEY NOT NULL,
                    mono_ns INTEGER NOT NULL,
                    wall_ns INTEGER NOT NULL);
                ALTER TABLE session ADD COLUMN station_id TEXT;
                ALTER TABLE event ADD COLUMN station_id TEXT;
                CREATE INDEX event_by_id ON event(id);
                -- The logs merged into this one, by their station's identity.
                CREATE TABLE merged_log (
                    id TEXT PRIMARY KEY NOT NULL,
                    station TEXT,
                    path TEXT NOT NULL,
                    mono_ns INTEGER NOT NULL,
                    wall_ns INTEGER NOT NULL);
                """)
        let now = LogTime.now()
        try db.execute(
            sql: "INSERT INTO log_identity (id, mono_ns, wall_ns) VALUES (?, ?, ?)",
            arguments: [UUID().uuidString.lowercased(), now.monoNs, now.wallNs])
        try appendOnly(db, "log_identity")
        try appendOnly(db, "merged_log")
    }

    /// A dog's notes after it was added: each a new row, dated, so the history stays (the
    /// dog's own `notes` are those it was added with; its current notes are the latest row).
    private static func v5(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE dog_note (
                    id TEXT PRIMARY KEY NOT NULL,
                    dog_id TEXT NOT NULL REFERENCES dog(id),
                    text TEXT NOT NULL,
                    mono_ns INTEGER NOT NULL,
                    wall_ns INTEGER NOT NULL);
                CREATE INDEX dog_note_by_dog ON dog_note(dog_id);
                """)
        try appendOnly(db, "dog_note")
    }

    static func appendOnly(_ db: Database, _ table: String) throws {
        try db.execute(
            sql: """
                CREATE TRIGGER \(table)_append_only_update BEFORE UPDATE ON \(table)
                BEGIN SELECT RAISE(ABORT, 'the session log is append-only'); END;
                CREATE TRIGGER \(table)_append_only_delete BEFORE DELETE ON \(table)
                BEGIN SELECT RAISE(ABORT, 'the session log is append-only'); END;
                """)
    }
}
