#!/usr/bin/env python3
"""Makes docs/dashboard.png, the README's picture of `vmerge dashboard`: a private PostgreSQL,
jobs over the fixtures (one whose clip is missing, so it fails), two workers merging, and the
page taken by headless Chromium while one job runs.

    python3 scripts/dashboard-screenshot.py [vmerge binary] [output png]
"""
import glob, json, os, shutil, subprocess, sys, tempfile, time

here = os.path.dirname(os.path.abspath(__file__))
vmerge = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "../.build/debug/vmerge"))
target = os.path.abspath(sys.argv[2] if len(sys.argv) > 2 else os.path.join(here, "../docs/dashboard.png"))
fixtures = os.path.join(here, "../fixtures")
pg = sorted(glob.glob("/usr/lib/postgresql/*/bin"))[-1]
folder = tempfile.mkdtemp(prefix="vmshot.")
as_pg = (lambda argv: ["runuser", "-u", "postgres", "--"] + argv) if os.getuid() == 0 else (lambda argv: argv)
if os.getuid() == 0:
    shutil.chown(folder, "postgres")
subprocess.run(as_pg([f"{pg}/initdb", "-D", f"{folder}/data", "-A", "trust", "-U", "postgres", "--no-locale"]),
               check=True, stdout=subprocess.DEVNULL)
subprocess.run(as_pg([f"{pg}/pg_ctl", "-D", f"{folder}/data", "-l", f"{folder}/log", "-w", "-o",
                      f"-k {folder} -c listen_addresses=''", "start"]), check=True, stdout=subprocess.DEVNULL)
db = f"host={folder} dbname=postgres user=postgres"
processes = []
try:
    out = tempfile.mkdtemp(prefix="vmshot-out.")
    clip = lambda name: os.path.join(fixtures, name + ".mov")
    a, b, e = clip("a_none_640x480_30fps_aac44k_stereo"), clip("b_rot90_1920x1080_30fps_aac48k_mono"), \
        clip("e_hflip_640x480_30fps_aac48k_stereo")
    jobs = [("beach day", [a, e]), ("birthday", [b, a]), ("hike", [e, e, a]), ("ski trip", [a, b, e] * 12),
            ("concert", [b] * 10), ("garden", [os.path.join(out, "missing.mov")]), ("school play", [a, e] * 6)]
    with open(out + ".jsonl", "w") as f:
        for name, inputs in jobs:
            f.write(json.dumps({"name": name, "inputs": inputs, "output": name.replace(" ", "-") + ".mp4",
                                "options": {"poster": "{name}.jpg"}}) + "\n")
    run = lambda *args: subprocess.run([vmerge, *args], check=True, stdout=subprocess.DEVNULL)
    run("queue", "init", "--db", db)
    run("queue", "add", "--db", db, "--out", out, "--min-duration", "0", "--max-attempts", "1", out + ".jsonl")
    dashboard = subprocess.Popen([vmerge, "dashboard", "--db", db, "--listen", "127.0.0.1:0"], stderr=subprocess.PIPE,
                                 text=True)
    processes.append(dashboard)
    url = dashboard.stderr.readline().split("serving ")[1].split(" ")[0]
    for name in ("studio-1", "studio-2"):
        processes.append(subprocess.Popen([vmerge, "worker", "--db", db, "--name", name, "--poll-interval", "0.2"],
                                          stderr=subprocess.DEVNULL))
    psql = lambda sql: subprocess.run([f"{pg}/psql", "-X", "-A", "-t", "-d", db, "-c", sql], capture_output=True,
                                      text=True).stdout.strip()
    # Until the long job runs with a tenth made, the short ones done and the broken one failed.
    deadline = time.time() + 120
    while time.time() < deadline:
        ready = psql("SELECT count(*) FROM vmerge.jobs WHERE name = 'ski trip' AND state = 'running' "
                     "AND (progress->>'out_time')::float > 4")
        if ready == "1" and psql("SELECT count(*) FROM vmerge.jobs WHERE state = 'failed'") == "1":
            break
        time.sleep(0.2)
    subprocess.run(["chromium", "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    f"--user-data-dir={folder}/chromium", "--window-size=1280,820", f"--screenshot={target}", url],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    print(target)
finally:
    for p in processes:
        p.kill()
        p.wait()
    subprocess.run(as_pg([f"{pg}/pg_ctl", "-D", f"{folder}/data", "-m", "immediate", "-w", "stop"]),
                   stdout=subprocess.DEVNULL)
    shutil.rmtree(folder, ignore_errors=True)
