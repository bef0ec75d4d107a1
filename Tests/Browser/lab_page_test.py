#!/usr/bin/env python3
"""The lab's page (lineup-lab) in Debian's headless Chromium, at 390 px.

Starts a throwaway PostgreSQL of its own (initdb into a temporary directory, its Unix socket
there, no TCP; as the postgres user when root), makes the lab's roles and logins, migrates the
store with lineup-sync, runs the built lineupd (simulated, serving its socket) with a
trainer-led session for Rex, syncs it once with lineup-sync (which sends the heartbeat), and
adds a station the store knows but that never sent one. Then lineup-lab with a researcher
account: the page must redirect to the login, list bench-a as reachable with its session,
the dog and lineupd's state, list the silent station as never seen, redraw by itself when a
new heartbeat arrives (a second session) and have no horizontal scroll at 390 px. Exits
non-zero on any failure. Usage: python3 Tests/Browser/lab_page_test.py (after `swift build`;
needs postgresql, chromium, chromium-driver and selenium).
"""
import glob
import os
import shutil
import signal
import subprocess
import tempfile

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

from page_test import BUILD, ARTIFACTS, free_port, run, wait_for


def postgres_binaries():
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    if not found:
        raise SystemExit("PostgreSQL is not installed (apt-get install postgresql)")
    return os.path.dirname(found[-1])


def as_postgres(args):
    return (["/sbin/runuser", "-u", "postgres", "--"] if os.getuid() == 0 else []) + args


def connection_file(path, directory, port, user, password):
    with open(path, "w") as f:
        f.write(f"host = {directory}\nport = {port}\ndatabase = lab\nuser = {user}\npassword = {password}\n")
    os.chmod(path, 0o600)
    return path


def card(driver, name):
    for element in driver.find_elements(By.CSS_SELECTOR, "#stations .station"):
        if element.find_element(By.CSS_SELECTOR, "h2 span").text == name:
            return element.text
    return None


def main():
    os.makedirs(ARTIFACTS, exist_ok=True)
    binaries = postgres_binaries()
    work = tempfile.mkdtemp(prefix="lineup-browser-lab-")
    pg = f"{work}/pg"
    os.makedirs(pg)
    os.chmod(work, 0o755)
    os.chmod(pg, 0o777)
    pg_port = free_port()
    sock, db, users = f"{work}/lineup.sock", f"{work}/lineup.db", f"{work}/users.db"
    port = free_port()
    env = dict(os.environ, LINEUP_SOCKET=sock)
    processes = []
    driver = None
    started = False
    try:
        run(*as_postgres([f"{binaries}/initdb", "-D", f"{pg}/data", "-U", "lineup_admin", "--auth=trust",
                          "--no-sync", "-E", "UTF8", "--locale=C"]))
        run(*as_postgres([f"{binaries}/pg_ctl", "-D", f"{pg}/data", "-l", f"{pg}/server.log", "-w", "-o",
                          f"-k {pg} -p {pg_port} -c listen_addresses='' -c fsync=off", "start"]))
        started = True

        def psql(database, sql):
            run("/usr/bin/psql", "-h", pg, "-p", str(pg_port), "-U", "lineup_admin", "-d", database,
                "-v", "ON_ERROR_STOP=1", "-q", "-c", sql)

        psql("postgres", "CREATE ROLE lineup_owner LOGIN CREATEROLE PASSWORD 'owner-pw'")
        psql("postgres", "CREATE DATABASE lab OWNER lineup_owner")
        owner = connection_file(f"{work}/owner.conf", pg, pg_port, "lineup_owner", "owner-pw")
        run(f"{BUILD}/lineup-sync", "--migrate", "--connection", owner)
        psql("lab", "CREATE ROLE station_a LOGIN PASSWORD 'station-pw' IN ROLE lineup_station")
        psql("lab", "CREATE ROLE lab_page LOGIN PASSWORD 'page-pw' IN ROLE lineup_researcher")
        station = connection_file(f"{work}/station.conf", pg, pg_port, "station_a", "station-pw")
        page_conf = connection_file(f"{work}/page.conf", pg, pg_port, "lab_page", "page-pw")

        processes.append(subprocess.Popen(
            [f"{BUILD}/lineupd", "--simulate", "--serve", "--socket", sock, "--db", db, "--speed", "10",
             "--no-realtime", "--device", "null", "--no-virtual-dog"], start_new_session=True,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        wait_for("lineupd's socket", lambda: subprocess.run(
            [f"{BUILD}/lineupctl", "status"], env=env, capture_output=True).returncode == 0)
        run(f"{BUILD}/lineupctl", "session", "start", "--dog", "Rex", "--program", "study", "--step", "indicate/1",
            "--mode", "trainer-led", "--new-dog", env=env)
        sync = [f"{BUILD}/lineup-sync", "--once", "--log", db, "--connection", station, "--socket", sock,
                "--name", "bench-a"]
        run(*sync)
        psql("lab", "INSERT INTO store.station (id, mono_ns, wall_ns) VALUES ('silent-station', 0, 0)")

        run(f"{BUILD}/lineupctl", "web", "user", "add", "rui", "--role", "researcher", "--users", users,
            "--password-stdin", stdin="researcher-password-1\n")
        processes.append(subprocess.Popen(
            [f"{BUILD}/lineup-lab", "--connection", page_conf, "--users", users, "--host", "127.0.0.1",
             "--port", str(port)], start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        base = f"http://127.0.0.1:{port}"
        wait_for("lineup-lab", lambda: __import__("socket").socket().connect_ex(("127.0.0.1", port)) == 0)

        options = webdriver.ChromeOptions()
        options.binary_location = "/usr/bin/chromium"
        for flag in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=390,844"]:
            options.add_argument(flag)
        driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
        driver.set_window_size(390, 844)
        page = lambda id: driver.find_element(By.ID, id)
        driver.get(base + "/")
        wait_for("the login page", lambda: driver.current_url.endswith("/login"))
        page("name").send_keys("rui")
        page("password").send_keys("researcher-password-1")
        page("login-button").click()
        wait_for("logged in", lambda: "rui (researcher)" in page("who").text)

        wait_for("bench-a listed", lambda: card(driver, "bench-a"))
        text = card(driver, "bench-a")
        for expected in ["reachable", "Rex", "trainer-led", "0 rows", "none", "MB"]:
            if expected not in text:
                raise SystemExit(f"bench-a's card lacks {expected!r}:\n{text}")
        silent = card(driver, "silent-station") or ""
        if "never seen" not in silent or "Faults" in silent:
            raise SystemExit(f"the station without a heartbeat is not 'never seen', with nothing else:\n{silent}")
        if "the project's rule" not in page("rule").text:
            raise SystemExit(f"the reachability rule is not said: {page('rule').text!r}")
        scroll = driver.execute_script("return [document.documentElement.scrollWidth, window.innerWidth]")
        if scroll[0] > scroll[1]:
            raise SystemExit(f"horizontal scroll at 390 px: content {scroll[0]} px wide in {scroll[1]} px")
        driver.save_screenshot(os.path.join(ARTIFACTS, "lab-page-390.png"))

        # A new heartbeat (lineupd stopped) is shown without a reload.
        os.killpg(processes[0].pid, signal.SIGTERM)
        processes[0].wait(10)
        run(*sync)
        wait_for("lineupd shown as not answering", lambda: "not answering" in (card(driver, "bench-a") or ""), 15)
        print("lab page browser test: passed; bench-a reachable with its session, a station never seen, "
              f"lineupd's absence shown without a reload, no horizontal scroll at 390 px; screenshot in {ARTIFACTS}")
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
        if started:
            subprocess.run(as_postgres([f"{binaries}/pg_ctl", "-D", f"{pg}/data", "-m", "immediate", "-w", "stop"]),
                           capture_output=True)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
