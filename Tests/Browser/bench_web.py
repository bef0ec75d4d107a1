#!/usr/bin/env python3
"""Benchmarks of the station's page (figures only, never a timed test): prints one JSON object.

- edge -> event shown: a nose put at a station through lineupd's `simulate` request (on one
  control-socket connection kept open, so no process start is counted), its time taken just
  before the request is written; the time the page's DOM shows the event's line, taken in
  Chromium by a MutationObserver on the events list (performance.timeOrigin + performance.now()).
  Both are the same machine's wall clock (CLOCK_REALTIME), so no correlation is needed.
- first page load: loadEventEnd of "/" in a logged-in headless Chromium, five navigations (the
  first right after login; the later ones may use Chromium's cache).
- lineup-web's RSS (VmRSS, and its anonymous and file-backed parts) and threads idle (no page
  open) and with 20 live streams open (20 SSE connections from this script, each a logged-in
  page's cookie, read as a page reads them), after 10 s of status frames; and the CPU time
  lineup-web used while the 20 streams were live.
  lineup-web runs with the Environment= lines of systemd/lineup-web.service (as installed),
  plus any --web-env; --no-unit-env leaves the unit's out (to measure a setting before/after).
- `lineup-bench click` with the 20 streams live and without them, each with the hot thread
  realtime as lineupd's is installed (SCHED_FIFO 80 where permitted; its JSON's `realtime` says
  whether it was granted) and with --no-realtime.
- the machine: cores, load average (1 min) before and after, kernel.
Usage: python3 Tests/Browser/bench_web.py [--edges 100] [--clicks 500] [--build debug|release]
           [--bin-dir DIR] [--web-env NAME=VALUE ...] [--no-unit-env]
"""
import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(__file__))
from page_test import ROOT, free_port, wait_for  # noqa: E402

from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402


def quantile(values, q):
    """The project's one quantile (docs/figures.md): linear between closest ranks (type 7)."""
    xs = sorted(values)
    h = (len(xs) - 1) * q
    lo = int(h)
    return xs[lo] + (h - lo) * (xs[min(lo + 1, len(xs) - 1)] - xs[lo])


def memory(pid):
    """VmRSS and its anonymous (heap, stacks) and file-backed (code) parts in MiB, and threads."""
    fields = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            name, _, value = line.partition(":")
            fields[name] = value.split()[0] if value.split() else ""
    mib = lambda name: round(int(fields[name]) / 1024, 1)  # noqa: E731
    return {"rssMiB": mib("VmRSS"), "rssMB": round(int(fields["VmRSS"]) * 1024 / 1e6, 1),
            "anonMiB": mib("RssAnon"), "fileMiB": mib("RssFile"), "threads": int(fields["Threads"])}


def cpu_seconds(pid):
    """User + system CPU time of a process so far (/proc/PID/stat, fields 14 and 15)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def unit_environment(unit):
    """The Environment= assignments of a systemd unit file, as the service gets them."""
    env = {}
    with open(os.path.join(ROOT, "systemd", unit)) as f:
        for line in f:
            if line.startswith("Environment="):
                for assignment in line.strip()[len("Environment="):].split():
                    name, _, value = assignment.partition("=")
                    env[name] = value
    return env


class Control:
    """One control-socket connection: requests written as lineupctl writes them."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(path)
        self.file = self.sock.makefile("rb")
        self.next = 0

    def send(self, request, **fields):
        self.next += 1
        line = json.dumps(dict(v=1, id=self.next, request=request, **fields)) + "\n"
        started = time.time()
        self.sock.sendall(line.encode())
        reply = json.loads(self.file.readline())
        if "error" in reply:
            raise SystemExit(f"{request} refused: {reply}")
        return started


def login_cookie(base, name, password):
    request = urllib.request.Request(
        base + "/api/login", data=json.dumps({"name": name, "password": password}).encode(),
        headers={"Content-Type": "application/json", "Origin": base}, method="POST")
    with urllib.request.urlopen(request) as response:
        return response.headers["Set-Cookie"].split(";")[0]


def open_stream(port, cookie):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(f"GET /api/events HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nCookie: {cookie}\r\n\r\n".encode())
    s.setblocking(False)
    return s


def drain(streams):
    for s in streams:
        try:
            while s.recv(65536):
                pass
        except BlockingIOError:
            pass


class Reader(threading.Thread):
    """Reads the open streams as their pages would, while a benchmark runs beside them."""

    def __init__(self, streams):
        super().__init__(daemon=True)
        self.streams, self.stop = streams, threading.Event()

    def run(self):
        while not self.stop.wait(0.05):
            drain(self.streams)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--edges", type=int, default=100)
    parser.add_argument("--clicks", type=int, default=500)
    parser.add_argument("--build", default="debug")
    parser.add_argument("--bin-dir", help="the binaries to measure instead of .build/BUILD's (e.g. the "
                        ".deb's /usr/bin unpacked by dpkg-deb -x)")
    parser.add_argument("--web-env", action="append", default=[], metavar="NAME=VALUE",
                        help="an environment variable for lineup-web (after the unit's)")
    parser.add_argument("--no-unit-env", action="store_true",
                        help="run lineup-web without systemd/lineup-web.service's Environment= lines")
    args = parser.parse_args()
    web_env = {} if args.no_unit_env else unit_environment("lineup-web.service")
    for assignment in args.web_env:
        name, equals, value = assignment.partition("=")
        if not equals or not name:
            raise SystemExit(f"bench_web.py: --web-env {assignment!r} is not NAME=VALUE")
        web_env[name] = value
    load_before = os.getloadavg()[0]
    build = os.path.abspath(args.bin_dir) if args.bin_dir else os.path.join(ROOT, ".build", args.build)
    work = tempfile.mkdtemp(prefix="lineup-bench-web-")
    sock, db, users = f"{work}/lineup.sock", f"{work}/lineup.db", f"{work}/users.db"
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = dict(os.environ, LINEUP_SOCKET=sock)
    processes, driver, streams = [], None, []
    try:
        processes.append(subprocess.Popen(
            [f"{build}/lineupd", "--simulate", "--serve", "--socket", sock, "--db", db, "--device", "null",
             "--no-realtime", "--no-virtual-dog"], start_new_session=True,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        wait_for("lineupd's socket", lambda: os.path.exists(sock) and subprocess.run(
            [f"{build}/lineupctl", "status"], env=env, capture_output=True).returncode == 0)
        subprocess.run([f"{build}/lineupctl", "web", "user", "add", "tess", "--role", "trainer", "--users", users,
                        "--password-stdin"], input="tess-password-1\n", text=True, check=True, capture_output=True)
        web = subprocess.Popen(
            [f"{build}/lineup-web", "--socket", sock, "--users", users, "--host", "127.0.0.1", "--port", str(port)],
            env=dict(env, **web_env), start_new_session=True, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        processes.append(web)
        wait_for("lineup-web", lambda: socket.socket().connect_ex(("127.0.0.1", port)) == 0)
        time.sleep(2)  # settle before the idle figure (a measurement's pause, not a wait for correctness)
        rss_idle = memory(web.pid)

        options = webdriver.ChromeOptions()
        options.binary_location = "/usr/bin/chromium"
        for flag in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,900"]:
            options.add_argument(flag)
        driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
        driver.get(base + "/login")
        driver.find_element(By.ID, "name").send_keys("tess")
        driver.find_element(By.ID, "password").send_keys("tess-password-1")
        driver.find_element(By.ID, "login-button").click()
        wait_for("the live page", lambda: driver.find_element(By.ID, "live").text == "Live")
        loads = []
        for _ in range(5):
            driver.get(base + "/")
            wait_for("loaded", lambda: driver.execute_script(
                "const n = performance.getEntriesByType('navigation')[0]; return n && n.loadEventEnd > 0"))
            loads.append(driver.execute_script(
                "const n = performance.getEntriesByType('navigation')[0]; return n.loadEventEnd - n.startTime"))
        wait_for("live again", lambda: driver.find_element(By.ID, "live").text == "Live")
        driver.execute_script("""
            window.shown = [];
            new MutationObserver((records) => {
              const at = performance.timeOrigin + performance.now();
              for (const r of records) for (const n of r.addedNodes) window.shown.push([at, n.textContent]);
            }).observe(document.getElementById('events'), {childList: true});
        """)
        control = Control(sock)
        injected = []
        for i in range(args.edges):
            station = str(1 + i % 5)
            before = len(driver.execute_script("return window.shown"))
            injected.append(control.send("simulate", input=station, active=True) * 1000)
            wait_for("the edge on the page", lambda: len(driver.execute_script("return window.shown")) > before, 10)
            control.send("simulate", input=station, active=False)
            wait_for("the release on the page", lambda: len(driver.execute_script("return window.shown")) > before + 1, 10)
        shown = driver.execute_script("return window.shown")
        # Each injection's first line shown after it.
        latencies, kinds = [], set()
        for t in injected:
            first = next(s for s in shown if s[0] >= t)
            latencies.append(first[0] - t)
            kinds.add(first[1].split(" ")[0])
        driver.quit()
        driver = None

        cookies = [login_cookie(base, "tess", "tess-password-1") for _ in range(4)]
        for i in range(20):
            streams.append(open_stream(port, cookies[i % 4]))
        cpu_before = cpu_seconds(web.pid)
        for _ in range(20):  # 10 s of frames, read as a page reads them
            time.sleep(0.5)
            drain(streams)
        rss_pages = memory(web.pid)
        web_cpu = (cpu_seconds(web.pid) - cpu_before) / 10

        def bench_click(realtime):
            # As lineupd's hot thread is installed (systemd/lineupd.service: SCHED_FIFO 80, which
            # the JSON's "realtime" says was granted or not), and without realtime for comparison.
            command = [f"{build}/lineup-bench", "click", "--clicks", str(args.clicks), "--device", "null"]
            out = subprocess.run(command + ([] if realtime else ["--no-realtime"]), capture_output=True,
                                 text=True, check=True).stdout
            return json.loads(out)

        reader = Reader(streams)
        reader.start()
        with_pages = {"realtime": bench_click(True), "noRealtime": bench_click(False)}
        reader.stop.set()
        reader.join()
        for s in streams:
            s.close()
        streams = []
        without = {"realtime": bench_click(True), "noRealtime": bench_click(False)}
        print(json.dumps({
            "build": args.build if not args.bin_dir else build,
            "machine": {"cpus": os.cpu_count(), "kernel": os.uname().release,
                        "loadAverage1mBefore": round(load_before, 2),
                        "loadAverage1mAfter": round(os.getloadavg()[0], 2)},
            "lineupWebEnvironment": web_env,
            "edgeToShownMs": {"n": len(latencies), "p50": round(quantile(latencies, 0.5), 2),
                              "p99": round(quantile(latencies, 0.99), 2), "max": round(max(latencies), 2),
                              "firstLineKinds": sorted(kinds)},
            "firstPageLoadMs": {"runs": [round(x, 1) for x in loads], "p50": round(quantile(loads, 0.5), 1)},
            "lineupWeb": {"idle": rss_idle, "with20Streams": rss_pages,
                          "cpuShareWith20Streams": round(web_cpu, 3)},
            "benchClick": {"with20Streams": with_pages, "without": without},
        }, indent=1))
    finally:
        if driver:
            driver.quit()
        for s in streams:
            s.close()
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
