#!/usr/bin/env python3
"""The Health screen's live levels and a dog's notes box, in Debian's headless Chromium.

Runs the built lineupd (simulated, serving its socket, no virtual dog) and lineup-web on its
log, logs a trainer in at 390 px, opens Health and puts a nose at station C with
`lineupctl simulate`: the levels table must say C is active without a reload, then clear
again. Then a dog's page: new notes saved through its box must be shown, the earlier ones
under their fold, and be in lineupd's log (`lineupctl dogs notes`). No horizontal scroll at
390 px on either screen. Exits non-zero on any failure. Usage: python3
Tests/Browser/health_dogs_test.py (after `swift build`; needs chromium, chromium-driver and
selenium).
"""
import os
import signal
import subprocess
import tempfile
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

from page_test import BUILD, ARTIFACTS, free_port, run, wait_for


def level_of(driver, name):
    # Read in one script: the screen redraws the table every second, and rows read one by one
    # from Python could be replaced in between (a stale element under load).
    return driver.execute_script(
        """for (const row of document.querySelectorAll('#levels tr')) {
             const cells = [...row.querySelectorAll('td')].map((td) => td.innerText.trim());
             if (cells.length && cells[0] === arguments[0]) return cells[1];
           }
           return null;""", name)


def no_horizontal_scroll(driver, where):
    scroll = driver.execute_script("return [document.documentElement.scrollWidth, window.innerWidth]")
    if scroll[0] > scroll[1]:
        raise SystemExit(f"horizontal scroll at 390 px on {where}: content {scroll[0]} px wide in {scroll[1]} px")


def main():
    os.makedirs(ARTIFACTS, exist_ok=True)
    work = tempfile.mkdtemp(prefix="lineup-browser-health-")
    sock, db, users = f"{work}/lineup.sock", f"{work}/lineup.db", f"{work}/users.db"
    port = free_port()
    env = dict(os.environ, LINEUP_SOCKET=sock)
    processes = []
    driver = None
    try:
        processes.append(subprocess.Popen(
            [f"{BUILD}/lineupd", "--simulate", "--serve", "--socket", sock, "--db", db, "--speed", "10",
             "--no-realtime", "--device", "null", "--no-virtual-dog"], start_new_session=True,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        wait_for("lineupd's socket", lambda: subprocess.run(
            [f"{BUILD}/lineupctl", "status"], env=env, capture_output=True).returncode == 0)
        run(f"{BUILD}/lineupctl", "dogs", "add", "Aino B", "--notes", "shy of metal bowls", env=env)
        run(f"{BUILD}/lineupctl", "web", "user", "add", "tess", "--role", "trainer", "--users", users,
            "--password-stdin", stdin="trainer-password-1\n")
        processes.append(subprocess.Popen(
            [f"{BUILD}/lineup-web", "--socket", sock, "--db", db, "--users", users, "--host", "127.0.0.1",
             "--port", str(port)], start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        base = f"http://127.0.0.1:{port}"
        wait_for("lineup-web", lambda: __import__("socket").socket().connect_ex(("127.0.0.1", port)) == 0)

        options = webdriver.ChromeOptions()
        options.binary_location = "/usr/bin/chromium"
        for flag in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=390,844"]:
            options.add_argument(flag)
        driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
        driver.set_window_size(390, 844)
        page = lambda id: driver.find_element(By.ID, id)
        driver.get(base + "/")
        wait_for("the login page", lambda: driver.current_url.endswith("/login"))
        page("name").send_keys("tess")
        page("password").send_keys("trainer-password-1")
        page("login-button").click()
        wait_for("logged in", lambda: "tess (trainer)" in page("who").text)

        # Health: the levels, redrawn by the screen itself.
        driver.find_element(By.CSS_SELECTOR, "#nav button[data-go=health]").click()
        wait_for("the levels table", lambda: level_of(driver, "C") == "clear")
        if level_of(driver, "ready") != "clear":
            raise SystemExit(f"the ready button's level is not shown: {page('levels').text}")
        run(f"{BUILD}/lineupctl", "simulate", "C", "on", env=env)
        wait_for("C active on the Health screen", lambda: level_of(driver, "C") == "active (nose)", 10)
        if level_of(driver, "B") != "clear":
            raise SystemExit(f"B is not clear: {page('levels').text}")
        no_horizontal_scroll(driver, "Health")
        driver.execute_script("document.getElementById('levels').scrollIntoView()")
        driver.save_screenshot(os.path.join(ARTIFACTS, "health-390.png"))
        run(f"{BUILD}/lineupctl", "simulate", "C", "off", env=env)
        wait_for("C clear again", lambda: level_of(driver, "C") == "clear", 10)

        # A dog's page: new notes through its box.
        driver.find_element(By.CSS_SELECTOR, "#nav button[data-go=dogs]").click()
        wait_for("the dog list", lambda: driver.find_element(By.LINK_TEXT, "Aino B"))
        driver.find_element(By.LINK_TEXT, "Aino B").click()
        box = wait_for("the notes box", lambda: page("f-text"))
        if box.get_attribute("value") != "shy of metal bowls":
            raise SystemExit(f"the notes box does not start from the notes: {box.get_attribute('value')!r}")
        box.clear()
        box.send_keys("Calmer at the lineup since May")
        driver.find_element(By.CSS_SELECTOR, "#screen form button[type=submit]").click()
        wait_for("the new notes shown", lambda: any(
            p.text == "Calmer at the lineup since May" for p in driver.find_elements(By.CSS_SELECTOR, "#screen > p")))
        wait_for("the earlier notes under their fold",
                 lambda: "Earlier notes (1)" in driver.find_element(By.CSS_SELECTOR, "#screen details summary").text)
        no_horizontal_scroll(driver, "a dog's page")
        driver.save_screenshot(os.path.join(ARTIFACTS, "dog-notes-390.png"))
        notes = run(f"{BUILD}/lineupctl", "dogs", "notes", "Aino B", "--db", db).splitlines()
        if len(notes) != 2 or not notes[0].endswith("shy of metal bowls") or not notes[1].endswith(
                "Calmer at the lineup since May"):
            raise SystemExit(f"the log's notes are not both versions: {notes}")
        print("health and dogs browser test: passed; C read active then clear on the Health screen;"
              f" the dog's notes saved from its page, both versions in the log; screenshots in {ARTIFACTS}")
    finally:
        if driver:
            driver.quit()
        for p in reversed(processes):
            try:
                os.killpg(p.pid, signal.SIGTERM)
                p.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


if __name__ == "__main__":
    main()
