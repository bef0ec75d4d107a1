#!/usr/bin/env python3
"""A double-blind block in two browser sessions: the handler and the loading assistant.

Runs the built lineupd (simulated, serving its socket, a virtual dog at 10 x life's pace),
lineup-web, and two separate headless Chromium sessions (two Selenium drivers: no shared
cookies, cache or storage): a trainer account's page (the handler) and an assistant account's
page. The handler's page starts a double-blind block of research-5-station's phase-3/1 with
six samples; the assistant's page shows what to load and presses Loaded for each of 3 trials.
Every byte the handler's browser received is then checked: each response body (read through
the DevTools protocol's Network.getResponseBody), each server-sent event (Network's
eventSourceMessageReceived, from Chrome's performance log) and the page's DOM; none may hold
a sample label or a station of the layout, while the assistant's browser must have received
them (so the check can fail). The handler's account then asks for the layout by every route
lineup-web answers; each answer must be a refusal without the layout. A third browser, a
`handler` account's (the handler who must not know the layout), enters its guess of the target's
station on the page each trial: every guess must be in `lineupctl stats --guesses`, and nothing
that browser received may hold the layout either.
Usage: python3 Tests/Browser/blind_test.py (after `swift build`; needs chromium,
chromium-driver and `pip install selenium`). Prints "blind browser test: passed" at the end.
"""
import json
import os
import re
import signal
import socket
import subprocess
import tempfile

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

from page_test import BUILD, free_port, run, wait_for

SAMPLES = ["T-7", "C-1", "C-2", "C-3", "C-4", "C-5"]
# What in a reply or a frame would give the layout away (as BlindPageTests checks in Swift).
LEAKS = ['"station":', '"kind":"target"', '"stations":[']
TRIALS = 3


def browser(base, name, password):
    """A Chromium session of its own, logged in, with its network recorded."""
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=390,844"]:
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    driver.execute_cdp_cmd("Network.enable", {})
    driver.get(base + "/login")
    driver.find_element(By.ID, "name").send_keys(name)
    driver.find_element(By.ID, "password").send_keys(password)
    driver.find_element(By.ID, "login-button").click()
    wait_for(f"{name} logged in", lambda: name in driver.find_element(By.ID, "who").text)
    wait_for(f"{name}'s page live", lambda: driver.find_element(By.ID, "live").text == "Live")
    return driver


class Received:
    """Everything one browser received: response bodies and server-sent events, in order."""

    def __init__(self, driver):
        self.driver = driver
        self.bodies = []
        self.events = []
        self.urls = []

    def collect(self):
        for entry in self.driver.get_log("performance"):
            message = json.loads(entry["message"])["message"]
            method, params = message.get("method"), message.get("params", {})
            if method == "Network.responseReceived":
                self.urls.append(params["response"]["url"])
            elif method == "Network.eventSourceMessageReceived":
                self.events.append(f"{params.get('eventName')}: {params.get('data')}")
            elif method == "Network.loadingFinished":
                try:
                    body = self.driver.execute_cdp_cmd("Network.getResponseBody", {"requestId": params["requestId"]})
                    self.bodies.append(body.get("body", ""))
                except Exception:
                    pass  # a body Chrome no longer keeps (a redirect's): nothing of it reached the page
        return self

    def everything(self):
        return "\n".join(self.bodies + self.events + [self.driver.page_source])


def fetch(driver, path, method="GET", body=None):
    """A request from the page itself (its cookie, its Origin, its CSRF token): status and text."""
    return driver.execute_async_script(
        """
        const [path, method, body, done] = arguments;
        (async () => {
          const me = await (await fetch('/api/me')).json();
          const init = {method, headers: {}};
          if (method !== 'GET') {
            init.headers = {'Content-Type': 'application/json', 'X-CSRF-Token': me.csrf};
            init.body = JSON.stringify(body || {});
          }
          const r = await fetch(path, init);
          done([r.status, await r.text()]);
        })().catch((e) => done([0, String(e)]));
        """, path, method, body)


def main():
    work = tempfile.mkdtemp(prefix="lineup-blind-")
    sock, db, users = f"{work}/lineup.sock", f"{work}/lineup.db", f"{work}/users.db"
    port = free_port()
    env = dict(os.environ, LINEUP_SOCKET=sock)
    processes, drivers = [], []
    try:
        processes.append(subprocess.Popen(
            [f"{BUILD}/lineupd", "--simulate", "--serve", "--socket", sock, "--db", db, "--speed", "10",
             "--no-realtime", "--device", "null"], start_new_session=True,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        wait_for("lineupd's socket", lambda: subprocess.run(
            [f"{BUILD}/lineupctl", "status"], env=env, capture_output=True).returncode == 0)
        run(f"{BUILD}/lineupctl", "dogs", "add", "Rex", env=env)
        for label in SAMPLES:
            run(f"{BUILD}/lineupctl", "samples", "add", label, "--kind",
                "target" if label.startswith("T") else "control", env=env)
        for name, role in [("tess", "trainer"), ("alex", "assistant"), ("hana", "handler")]:
            run(f"{BUILD}/lineupctl", "web", "user", "add", name, "--role", role, "--users", users,
                "--password-stdin", stdin=f"{name}-password-1\n")
        processes.append(subprocess.Popen(
            [f"{BUILD}/lineup-web", "--socket", sock, "--users", users, "--host", "127.0.0.1", "--port", str(port)],
            start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        wait_for("lineup-web", lambda: socket.socket().connect_ex(("127.0.0.1", port)) == 0)
        base = f"http://127.0.0.1:{port}"

        handler = browser(base, "tess", "tess-password-1")
        drivers.append(handler)
        assistant = browser(base, "alex", "alex-password-1")
        drivers.append(assistant)
        guesser = browser(base, "hana", "hana-password-1")
        drivers.append(guesser)
        handler_got, assistant_got, guesser_got = Received(handler), Received(assistant), Received(guesser)

        status, reply = fetch(handler, "/api/session/start", "POST", {
            "dog": "Rex", "program": "research-5-station", "step": "phase-3/1", "trials": TRIALS,
            "samples": SAMPLES, "handler": "H-9"})
        if status != 200:
            raise SystemExit(f"the handler's page could not start the block: {status} {reply}")
        def done():
            # status's "Trial  2 of 3; 1 done" line.
            found = re.search(r"; (\d+) done", run(f"{BUILD}/lineupctl", "status", env=env))
            return int(found.group(1)) if found else 0

        for trial in range(1, TRIALS + 1):
            # The assistant's page shows what to load where; Loaded is the ready press.
            wait_for(f"trial {trial}: the layout on the assistant's page", lambda: "T-7" in assistant.find_element(
                By.ID, "layout").text)
            # The handler's guess on the page, before the trial starts: one button a station.
            wait_for(f"trial {trial}: the guess buttons", lambda: len(guesser.find_elements(
                By.CSS_SELECTOR, "#guess-buttons button")) == 5)
            guess = "ABCDE"[trial % 5]
            guesser.find_element(By.CSS_SELECTOR, f'#guess-buttons button[data-guess="{guess}"]').click()
            wait_for(f"trial {trial}: the guess kept", lambda: f"Your guess for trial {trial}: station {guess}"
                     in guesser.find_element(By.ID, "guess-said").text)
            assistant.find_element(By.ID, "loaded").click()
            try:
                wait_for(f"trial {trial} over", lambda: done() >= trial, 60)
            except SystemExit:
                print(run(f"{BUILD}/lineupctl", "status", env=env), assistant.find_element(By.ID, "message").text)
                raise
            handler_got.collect()
            assistant_got.collect()
            guesser_got.collect()
        # The handler's account asks for the layout by every route lineup-web answers.
        for path in ["/api/layout", "/api/layout?view=assistant", "/api/layout?view=handler", "/api/status",
                     "/api/me", "/api/layout/assistant", "/api/assistant", "/api/queue", "/api/day", "/"]:
            status, body = fetch(handler, path)
            if any(label in body for label in SAMPLES) or any(leak in body for leak in LEAKS):
                raise SystemExit(f"the handler's account read the layout at {path}: {body[:300]}")
            if path.startswith("/api/layout") and status not in (403, 404):
                raise SystemExit(f"{path} answered the handler {status}, not a refusal: {body[:300]}")
        # The sitting's queue and the day view too (issue 37): nothing of a layout through them.
        for path in ["/api/layout", "/api/layout?view=assistant", "/api/status", "/api/queue", "/api/day", "/"]:
            status, body = fetch(guesser, path)
            if any(label in body for label in SAMPLES) or any(leak in body for leak in LEAKS):
                raise SystemExit(f"the handler role's account read the layout at {path}: {body[:300]}")
            if path.startswith("/api/layout") and status != 403:
                raise SystemExit(f"{path} answered the handler role {status}, not a refusal: {body[:300]}")
        handler_got.collect()
        assistant_got.collect()
        guesser_got.collect()
        guessed = guesser_got.everything()
        if not any(e.startswith("watch:") for e in guesser_got.events):
            raise SystemExit("the handler role's browser got no watch event: the capture saw nothing")
        for word in SAMPLES + LEAKS:
            if word in guessed:
                at = guessed.index(word)
                raise SystemExit(f"the handler role's browser received {word!r}: …{guessed[max(0, at - 120):at + 120]}…")
        mine = handler_got.everything()
        theirs = assistant_got.everything()
        if not any(e.startswith("watch:") for e in handler_got.events):
            raise SystemExit("the handler's browser got no watch event: the capture saw nothing")
        for word in SAMPLES + LEAKS:
            if word in mine:
                at = mine.index(word)
                raise SystemExit(f"the handler's browser received {word!r}: …{mine[max(0, at - 120):at + 120]}…")
            if word not in theirs:
                raise SystemExit(f"the assistant's browser never received {word!r}: the check cannot fail")
        # No assistant's command or instruction reaches the handler: a refusal says what is refused.
        page_text = handler.find_element(By.TAG_NAME, "body").text
        for where, said in [("received", mine), ("shown", page_text)]:
            found = re.search(r"--assistant|[Ll]oad trial \d", said)
            if found:
                raise SystemExit(f"the handler's browser {where} the assistant's part: {found.group(0)!r}")
        fetch(handler, "/api/session/end", "POST", {})
        # The handler's side was shown each trial's commitment before it started; once the
        # session is over, lineupctl verify-blinding recomputes the same digests from the log.
        committed = {}
        for event in handler_got.events:
            if event.startswith("watch:") and '"committed"' in event:
                data = json.loads(event[len("watch:"):])
                committed[int(data["trial"])] = data["sha256"]
        session = json.loads(run(f"{BUILD}/lineupctl", "sessions", "--db", db, "--json"))[0]["id"]
        # Every guess the handler's page entered is one stats --guesses counts.
        rows = json.loads(run(f"{BUILD}/lineupctl", "stats", "--guesses", "--json", "--db", db))
        counted = sum(r["guesses"] + r.get("late_guesses", 0) for r in rows if r["group"] == "H-9")
        if counted != TRIALS:
            raise SystemExit(f"stats --guesses counts {counted} of the page's {TRIALS} guesses: {rows}")
        verified = json.loads(run(f"{BUILD}/lineupctl", "verify-blinding", session, "--db", db, "--json"))
        digests = {t["number"]: t["digest"] for t in verified["trials"]}
        if committed != digests or len(digests) != TRIALS:
            raise SystemExit(f"the handler's page got commitments {committed}, the log verifies {digests}")
        print(f"blind browser test: passed; {TRIALS} double-blind trials; the handler's browser received "
              f"{len(handler_got.bodies)} bodies and {len(handler_got.events)} events, none with the layout; "
              f"the assistant's {len(assistant_got.events)} events had it; the {TRIALS} commitments it was shown "
              f"are the digests lineupctl verify-blinding recomputes; the handler role's browser entered {TRIALS} "
              f"guesses, all in stats --guesses, and received {len(guesser_got.bodies)} bodies and "
              f"{len(guesser_got.events)} events, none with the layout")
    finally:
        for driver in drivers:
            driver.quit()
        for p in processes:
            try:
                os.killpg(p.pid, signal.SIGTERM)
                p.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


if __name__ == "__main__":
    main()
