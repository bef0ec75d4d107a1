#!/usr/bin/env python3
"""Checks the burst phase of the emulated-hardware tier (guest.sh run_burst) in lineupd's log:
each trial's hold at the target, held through a burst of edges on the ready button that the
stopped daemon found waiting all at once, must be clicked at its deadline.

  check-burst.py DB TOLERANCE_MS DROPPED TRIAL:STATION:BURST...

For each trial: the nose's arrival is the first active edge at STATION logged in the trial
(its kernel timestamp); the click's timestamp is the hot loop's clock when the hold's deadline
ran (`click_edge_ns`); the hold is the session's `hold_ns`. Late = click - arrival - hold, in
ms; it must lie in [0, TOLERANCE_MS]. BURST edges were injected; those logged between the
arrival and the click are counted (the kernel keeps at most 64 for the whole request under
libgpiod v2, 16 per line under v1; DROPPED is lineupd's own count of events the kernel
dropped, v2 only). Prints one JSON object; exit 1 on a failure.
"""
import json
import sqlite3
import sys


def main(db_path, tolerance_ms, dropped, *plan):
    tolerance = float(tolerance_ms)
    db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    failures = []
    trials = []
    settings = db.execute("SELECT settings FROM session ORDER BY mono_ns DESC LIMIT 1").fetchone()
    hold_ns = int(json.loads(settings[0]).get("hold_ns", 0)) if settings else 0
    if hold_ns <= 0:
        failures.append("the session's hold_ns is not in the log")
    for spec in plan:
        number, station, burst = (int(x) for x in spec.split(":"))
        row = db.execute(
            "SELECT id, outcome FROM trial WHERE number = ? AND corrects IS NULL", (number,)).fetchone()
        if row is None:
            failures.append(f"trial {number} is not in the log")
            continue
        trial_id, outcome = row
        arrival = db.execute(
            "SELECT kernel_ns FROM event WHERE trial_id = ? AND kind = 'edge' AND station = ? AND value = 1 "
            "ORDER BY seq LIMIT 1", (trial_id, station)).fetchone()
        click = db.execute(
            "SELECT click_edge_ns FROM event WHERE trial_id = ? AND kind = 'click' ORDER BY seq LIMIT 1",
            (trial_id,)).fetchone()
        entry = {"trial": number, "burst": burst, "outcome": outcome}
        if arrival is None or arrival[0] is None:
            failures.append(f"trial {number}: no arrival at station {station} logged")
        elif click is None or click[0] is None:
            failures.append(f"trial {number}: the hold at station {station} was not clicked")
        else:
            late_ms = (click[0] - arrival[0] - hold_ns) / 1e6
            entry["late_ms"] = round(late_ms, 2)
            entry["burst_logged"] = db.execute(
                "SELECT COUNT(*) FROM event WHERE kind = 'button' AND detail LIKE '%ready%' "
                "AND kernel_ns > ? AND kernel_ns < ?", (arrival[0], click[0])).fetchone()[0]
            if not 0 <= late_ms <= tolerance:
                failures.append(
                    f"trial {number}: clicked {late_ms:.1f} ms after the hold was due (burst of {burst}), "
                    f"not within [0, {tolerance:g}] ms")
        if outcome != "hit":
            failures.append(f"trial {number}: outcome {outcome}, not hit")
        trials.append(entry)
    out = {"trials": trials, "hold_ms": hold_ns / 1e6, "tolerance_ms": tolerance,
           "dropped_edges": None if dropped == "null" else int(dropped), "failures": failures}
    print(json.dumps(out, separators=(",", ":")))
    return 1 if failures else 0


if __name__ == "__main__":
    if len(sys.argv) < 5:
        print(__doc__, file=sys.stderr)
        sys.exit(64)
    sys.exit(main(*sys.argv[1:]))
