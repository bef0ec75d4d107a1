#!/usr/bin/env python3
"""Checks the feeder's pulses in lineupd's session log against its clicks (the daemon phase of
hardware/vm/guest.sh, vm.toml's [feeder]).

  check-feeder.py DB DELAY_MS PULSE_MS

Each feeder event must follow a logged click (its detail's click_edge_ns is that click's edge),
go on at least DELAY_MS after that edge and stay on at least PULSE_MS (kernel_ns and duration_ns,
CLOCK_MONOTONIC), with its line set (value 1); a click without a pulse must fall within an
earlier pulse's delay and width (one pulse at a time, the project's rule). Prints one JSON
object: clicks, pulses, unfed_clicks, delay_ms_min / _max, pulse_ms_min / _max, failures.
Exit 1 on a mismatch or when no pulse was logged.
"""
import json
import sqlite3
import sys


def main(db_path, delay_ms, pulse_ms):
    db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    clicks = [r[0] for r in db.execute("SELECT click_edge_ns FROM event WHERE kind = 'click' ORDER BY seq")]
    failures = []
    pulses = []
    for kernel_ns, duration_ns, value, detail in db.execute(
        "SELECT kernel_ns, duration_ns, value, detail FROM event WHERE kind = 'feeder' ORDER BY seq"
    ):
        edge = json.loads(detail or "{}").get("click_edge_ns")
        if edge not in clicks:
            failures.append(f"a pulse at {kernel_ns} follows no logged click ({edge})")
            continue
        if value != 1 or duration_ns is None:
            failures.append(f"the pulse after the click at {edge} could not set its line")
            continue
        pulses.append((edge, kernel_ns - edge, duration_ns))
    for edge, delay, width in pulses:
        if delay < delay_ms * 1_000_000:
            failures.append(f"the pulse after {edge} went on {delay / 1e6:.1f} ms after its click")
        if width < pulse_ms * 1_000_000:
            failures.append(f"the pulse after {edge} lasted {width / 1e6:.1f} ms")
    fed = {p[0]: p for p in pulses}
    unfed = [c for c in clicks if c not in fed]
    for c in unfed:
        busy = any(e < c <= e + d + w for e, d, w in pulses)
        if not busy:
            failures.append(f"the click at {c} was not fed and no pulse was under way")
    if not pulses:
        failures.append("no feeder pulse in the log")
    delays = [p[1] / 1e6 for p in pulses]
    widths = [p[2] / 1e6 for p in pulses]
    out = {
        "clicks": len(clicks),
        "pulses": len(pulses),
        "unfed_clicks": len(unfed),
        "delay_ms_min": round(min(delays), 1) if delays else None,
        "delay_ms_max": round(max(delays), 1) if delays else None,
        "pulse_ms_min": round(min(widths), 1) if widths else None,
        "pulse_ms_max": round(max(widths), 1) if widths else None,
        "failures": failures,
    }
    print(json.dumps(out))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3])))
