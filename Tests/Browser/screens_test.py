#!/usr/bin/env python3
"""Every screen beside the live one, in Debian's headless Chromium at 390 px, driven by Selenium.

Runs the built lineupd (simulated, serving its socket, its virtual dog searching) and drives a
short double-blind session with lineupctl over the socket (not the page): three trials, each
started with `lineupctl ready`, ended with `session end`, then a trial corrected and a comment
added as lineupctl adds them. Then lineup-web reads that log (--db), and an admin and a
researcher each visit Dogs, a dog's page, Set-up, Samples, a sample, Health, Research, a
session's page and each statistics table: each must show its content (no error), no screen may
scroll horizontally at 390 px, and the statistics' intervals must be the ones `lineupctl stats`
prints. The researcher's page must show no control (live buttons, forms) and its POSTs must be
refused; the trials export downloaded by the browser must equal `lineupctl export`'s output
byte for byte. Screenshots of each screen at 390 px go to .build/artifacts/. Exits non-zero on
any failure. Usage: python3 Tests/Browser/screens_test.py (after `swift build`; needs chromium,
chromium-driver and `pip install selenium`).
"""
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from page_test import ARTIFACTS, BUILD, free_port, run, wait_for  # noqa: E402

from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402

SAMPLES = ["T-7", "C-1", "C-2", "C-3", "C-4", "C-5"]
TRIALS = 3


def browser(downloads):
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=390,844"]:
        options.add_argument(flag)
    options.add_experimental_option("prefs", {"download.default_directory": downloads,
                                              "download.prompt_for_download": False})
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    driver.set_window_size(390, 844)
    driver.execute_cdp_cmd("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": downloads})
    return driver


def login(driver, base, name, password):
    driver.get(base + "/")
    wait_for("the login page", lambda: driver.current_url.endswith("/login"))
    driver.find_element(By.ID, "name").send_keys(name)
    driver.find_element(By.ID, "password").send_keys(password)
    driver.find_element(By.ID, "login-button").click()
    wait_for(f"{name} logged in", lambda: name in driver.find_element(By.ID, "who").text)


def post(driver, path, body):
    """A POST from the logged-in page, as its own script sends one; returns the status."""
    return driver.execute_async_script("""
        const [path, body, done] = arguments;
        fetch('/api/me').then((r) => r.json()).then((me) => fetch(path, {method: 'POST',
            headers: {'Content-Type': 'application/json', 'X-CSRF-Token': me.csrf}, body: JSON.stringify(body)}))
          .then((r) => done(r.status)).catch((e) => done(String(e)));
        """, path, body)


class Visit:
    """The screens of one account, each checked and photographed at 390 px."""

    def __init__(self, driver, who):
        self.driver, self.who, self.seen = driver, who, []

    def screen(self):
        return self.driver.find_element(By.ID, "screen")

    def check(self, name, title, *texts):
        # The screen's own heading first (a screen left from before has another), then its content.
        wait_for(f"{self.who}: the {name} screen", lambda: self.screen().find_element(By.TAG_NAME, "h1").text.startswith(title))
        wait_for(f"{self.who}: the {name} screen's content {texts}", lambda: (
            self.screen().find_elements(By.CSS_SELECTOR, ".error") or all(t in self.screen().text for t in texts)))
        errors = [e.text for e in self.screen().find_elements(By.CSS_SELECTOR, ".error") if e.text.strip()]
        if errors:
            raise SystemExit(f"{self.who}: the {name} screen shows an error: {errors}")
        width = self.driver.execute_script("return [document.documentElement.scrollWidth, window.innerWidth]")
        if width[0] > width[1]:
            raise SystemExit(f"{self.who}: the {name} screen scrolls horizontally at 390 px: {width[0]} px in {width[1]} px")
        self.driver.execute_script("window.scrollTo(0, 0)")
        self.driver.save_screenshot(os.path.join(ARTIFACTS, f"screens-{self.who}-{name}-390.png"))
        self.seen.append(name)

    def nav(self, go):
        self.driver.find_element(By.CSS_SELECTOR, f'#nav button[data-go="{go}"]').click()

    def link(self, text):
        self.screen().find_element(By.LINK_TEXT, text).click()

    def rows(self):
        return [[td.text for td in tr.find_elements(By.TAG_NAME, "td")]
                for tr in self.screen().find_elements(By.CSS_SELECTOR, "table tr") if tr.find_elements(By.TAG_NAME, "td")]

    def heads(self):
        return [th.text for th in self.screen().find_elements(By.CSS_SELECTOR, "table th")]

    def all(self, session, stats_text, cli):
        self.nav("dogs")
        self.check("dogs", "Dogs", "Rex")
        self.link("Rex")
        self.check("dog", "Rex", "Progress", "Sessions", "double-blind")
        self.nav("setup")
        self.check("setup", "Session set-up", "research-5-station")
        self.nav("samples")
        self.check("samples", "Samples", *SAMPLES)
        uses = {row[0]: row[4] for row in self.rows()}
        expected = {s["label"]: str(s["uses"]) for s in cli["samples"]}
        if uses != expected:
            raise SystemExit(f"{self.who}: the samples' uses {uses} are not lineupctl samples' {expected}")
        self.link("T-7")
        self.check("sample", "Sample T-7", "Used with", "Rex")
        self.nav("health")
        self.check("health", "Station health", "Sound", "libgpiod")
        self.nav("research")
        self.check("research", "Research", "Sessions", "double-blind", "Report (HTML)", "trials.csv")
        self.screen().find_element(By.CSS_SELECTOR, "table tr td a").click()
        self.check("session", "Session of Rex", "Trials", "video review", "calm at the start", "Shorter breaks",
                   session["started"])
        # The trials table: each trial's outcome, indicated station and layout as lineupctl
        # trials has them, each station by its name (issue 32: the page showed numbers).
        shown = {row[0]: row for row in self.rows() if len(row) == 6 and row[0].isdigit()}
        if len(shown) != TRIALS:
            raise SystemExit(f"{self.who}: the session's page shows {len(shown)} trials, not {TRIALS}: {self.rows()}")
        for trial in cli["trials"]:
            row = shown[str(trial["number"])]
            if any(not slot.get("name") for slot in trial["layout"]):
                raise SystemExit(f"{self.who}: lineupctl trials --json names no station: {trial['layout']}")
            slots = [f"{slot['name']}: {slot.get('sample') or 'no sample'} ({slot['kind']})" for slot in trial["layout"]]
            indicated = trial.get("indicated_name") or "–"
            if row[1] != trial["outcome"] or row[2] != indicated or any(slot not in row[4] for slot in slots):
                raise SystemExit(f"{self.who}: trial {trial['number']} shows {row}, the log has {trial['outcome']}, "
                                 f"{indicated}, {slots}")
        for by in ["dog", "session", "sample", "station"]:
            self.link("← Research")
            self.check("research", "Research", "Sessions")
            self.screen().find_element(By.ID, f"stats-{by}").click()
            self.check(f"stats-{by}", f"Statistics by {by}", "Sensitivity", "95 % Wilson")
            heads = self.heads()
            cells = [row[heads.index(h)] for row in self.rows() for h in ("Sensitivity", "Specificity", "PPV")]
            shown = [c for c in cells if c != "-"]
            if not shown:
                raise SystemExit(f"{self.who}: statistics by {by} show no interval: {self.rows()}")
            for cell in shown:
                if cell not in stats_text[by]:
                    raise SystemExit(f"{self.who}: statistics by {by} show {cell!r}, which lineupctl stats does not print:\n{stats_text[by]}")
        self.link("← Research")
        self.check("research", "Research", "Sessions")


def main():
    os.makedirs(ARTIFACTS, exist_ok=True)
    work = tempfile.mkdtemp(prefix="lineup-screens-")
    sock, db, users = f"{work}/lineup.sock", f"{work}/lineup.db", f"{work}/users.db"
    downloads = f"{work}/downloads"
    os.makedirs(downloads)
    port = free_port()
    env = dict(os.environ, LINEUP_SOCKET=sock)
    ctl = f"{BUILD}/lineupctl"
    processes, drivers = [], []
    try:
        processes.append(subprocess.Popen(
            [f"{BUILD}/lineupd", "--simulate", "--serve", "--socket", sock, "--db", db, "--speed", "10",
             "--no-realtime", "--device", "null"], start_new_session=True,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        wait_for("lineupd's socket", lambda: subprocess.run([ctl, "status"], env=env, capture_output=True).returncode == 0)
        run(ctl, "dogs", "add", "Rex", env=env)
        for label in SAMPLES:
            run(ctl, "samples", "add", label, "--kind", "target" if label.startswith("T") else "control", env=env)

        # A short double-blind session, driven over the socket as a trainer at the shell drives it.
        run(ctl, "session", "start", "--dog", "Rex", "--program", "research-5-station", "--step", "phase-3/1",
            "--trials", str(TRIALS), "--seed", "5", *[a for label in SAMPLES for a in ("--sample", label)], env=env)

        def done():
            found = re.search(r"; (\d+) done", run(ctl, "status", env=env))
            return int(found.group(1)) if found else 0

        for trial in range(1, TRIALS + 1):
            wait_for(f"trial {trial} ready", lambda: subprocess.run(
                [ctl, "ready"], env=env, capture_output=True).returncode == 0, 60)
            wait_for(f"trial {trial} over", lambda: done() >= trial, 60)
        run(ctl, "session", "end", "--suggestions", "Shorter breaks", env=env)
        sessions = json.loads(run(ctl, "sessions", "--db", db, "--json"))
        session = sessions[0]
        wait_for("the session ended in the log", lambda: json.loads(run(ctl, "sessions", "--db", db, "--json"))[0].get("ended_how"))
        trial = json.loads(run(ctl, "trials", "--db", db, "--json", "--oldest-first"))[0]
        run(ctl, "trial", "correct", trial["id"], "--outcome", "miss", "--reason", "video review: no hold", env=env)
        run(ctl, "session", "note", session["id"], "calm at the start", env=env)
        cli = {"samples": json.loads(run(ctl, "samples", "--db", db, "--json")),
               "trials": json.loads(run(ctl, "trials", "--db", db, "--json", "--session", session["id"]))}
        stats_text = {by: run(ctl, "stats", "--db", db, "--by", by) for by in ["dog", "session", "sample", "station"]}

        for name, role in [("ana", "admin"), ("rita", "researcher")]:
            run(ctl, "web", "user", "add", name, "--role", role, "--users", users, "--password-stdin",
                stdin=f"{name}-password-1\n")
        processes.append(subprocess.Popen(
            [f"{BUILD}/lineup-web", "--socket", sock, "--db", db, "--users", users, "--host", "127.0.0.1",
             "--port", str(port)], start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        wait_for("lineup-web", lambda: socket.socket().connect_ex(("127.0.0.1", port)) == 0)
        base = f"http://127.0.0.1:{port}"

        admin = browser(downloads)
        drivers.append(admin)
        login(admin, base, "ana", "ana-password-1")
        visit = Visit(admin, "admin")
        visit.all(session, stats_text, cli)
        visit.nav("dogs")
        visit.check("dogs", "Dogs", "Add a dog")
        # A comment on a session that ended earlier, from its page; read back from the log.
        visit.nav("research")
        visit.check("research", "Research", "Sessions")
        visit.screen().find_element(By.CSS_SELECTOR, "table tr td a").click()
        visit.check("session", "Session of Rex", "Add the comment")
        comment = admin.find_element(By.ID, "f-comment")
        admin.execute_script("arguments[0].scrollIntoView({block: 'center'})", comment)
        comment.send_keys("rewatched: handler steady")
        add = comment.find_element(By.XPATH, "ancestor::form//button[@type='submit']")
        admin.execute_script("arguments[0].scrollIntoView({block: 'center'})", add)
        add.click()
        wait_for("the older session's comment on its page", lambda: "rewatched: handler steady" in visit.screen().text)
        shown = run(ctl, "session", "show", session["id"], "--db", db)
        if "rewatched: handler steady" not in shown:
            raise SystemExit(f"the comment added on the session's page is not in lineupctl session show:\n{shown}")

        researcher = browser(downloads)
        drivers.append(researcher)
        login(researcher, base, "rita", "rita-password-1")
        visit = Visit(researcher, "researcher")
        visit.all(session, stats_text, cli)
        # No control of the station and no form anywhere on the researcher's page: each screen
        # checked once it has drawn what it draws last (an admin's forms come in the same step).
        for screen, title, last in [("dogs", "Dogs", "Rex"), ("setup", "Session set-up", "research-5-station"),
                                    ("samples", "Samples", "T-7"), ("research", "Research", "double-blind"),
                                    ("live", None, None)]:
            visit.nav(screen)
            if title:
                visit.check(screen, title, last)
            else:
                wait_for("the live screen", lambda: researcher.find_element(By.ID, "state").text not in ("", "…"))
            shown = [b.text for b in researcher.find_elements(By.CSS_SELECTOR, "main button, main form")
                     if b.is_displayed()]
            if shown:
                raise SystemExit(f"researcher: the {screen} screen shows controls: {shown}")
        refused = [("/api/dogs", {"name": "Max"}), (f"/api/sessions/{session['id']}/note", {"text": "x"}),
                           ("/api/session/start", {"dog": "Rex", "program": "study", "step": "indicate/1"}),
                   ("/api/ready", {}), ("/api/press", {"button": "clicker"}), ("/api/abort", {})]
        for path, body in refused:
            status = post(researcher, path, body)
            if status != 403:
                raise SystemExit(f"researcher: POST {path} answered {status}, not 403")

        # The trials export, downloaded by the browser from the Research screen's link.
        visit.nav("research")
        visit.check("research", "Research", "Sessions")
        researcher.find_element(By.ID, "export-trials-csv").click()
        path = os.path.join(downloads, "trials.csv")
        wait_for("trials.csv downloaded", lambda: os.path.exists(path) and not any(
            f.endswith(".crdownload") for f in os.listdir(downloads)), 30)
        with open(path, "rb") as f:
            downloaded = f.read()
        expected = subprocess.run([ctl, "export", "--db", db, "--what", "trials"], capture_output=True, check=True).stdout
        if downloaded != expected:
            raise SystemExit(f"the page's trials.csv ({len(downloaded)} bytes) is not lineupctl export's ({len(expected)} bytes)")
        # One session's trials, from the session's page, as lineupctl export --session writes them.
        visit.screen().find_element(By.CSS_SELECTOR, "table tr td a").click()
        visit.check("session", "Session of Rex", "This session's exports")
        researcher.find_element(By.ID, "export-session-trials-csv").click()
        one = os.path.join(downloads, f"trials-{session['id'][:8]}.csv")
        wait_for(f"{os.path.basename(one)} downloaded", lambda: os.path.exists(one) and not any(
            f.endswith(".crdownload") for f in os.listdir(downloads)), 30)
        with open(one, "rb") as f:
            downloaded_one = f.read()
        expected_one = subprocess.run([ctl, "export", "--db", db, "--what", "trials", "--session", session["id"]],
                                      capture_output=True, check=True).stdout
        if downloaded_one != expected_one:
            raise SystemExit(f"the session's {os.path.basename(one)} is not lineupctl export --session's")
        print(f"screens browser test: passed; admin and researcher each visited {len(set(visit.seen))} screens at 390 px "
              f"without horizontal scroll; the researcher's {len(refused)} POSTs refused; trials.csv downloaded, "
              f"{len(downloaded)} bytes equal to lineupctl export's, and one session's {len(downloaded_one)} bytes "
              f"equal to lineupctl export --session's; a comment added to an ended session from its page; "
              f"screenshots in {ARTIFACTS}")
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
