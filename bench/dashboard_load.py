#!/usr/bin/env python3
"""What watching costs the work: two queue workers merge set A (one job each, the 6 clips of
bench.py's set A) with no dashboard, then with `vmerge dashboard` and 50 clients polling it as the
page's own script does (its main part every 2 s) plus a Prometheus scrape every 5 s; runs
alternate, on a private PostgreSQL. Prints each run's wall time (until both jobs are done), the
medians and their ratio, the dashboard's CPU seconds and the clients' request times.

    python3 bench/dashboard_load.py [--runs 3] [--clients 50] [--vmerge PATH] [--work DIR]
"""
import argparse, glob, http.client, json, os, shutil, statistics, subprocess, sys, tempfile, threading, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (set A's inputs, generated once and cached in the work folder)


def as_postgres(argv):
    return ["runuser", "-u", "postgres", "--"] + argv if os.getuid() == 0 else argv


class Database:
    """A private PostgreSQL on a Unix socket in a temporary folder."""

    def __init__(self):
        self.bin = sorted(glob.glob("/usr/lib/postgresql/*/bin"))[-1]
        self.dir = tempfile.mkdtemp(prefix="vmdash.")
        if os.getuid() == 0:
            shutil.chown(self.dir, "postgres")
        subprocess.run(as_postgres([f"{self.bin}/initdb", "-D", f"{self.dir}/data", "-A", "trust", "-U", "postgres",
                                    "-E", "UTF8", "--no-locale"]), check=True, stdout=subprocess.DEVNULL)
        subprocess.run(as_postgres([f"{self.bin}/pg_ctl", "-D", f"{self.dir}/data", "-l", f"{self.dir}/log", "-w",
                                    "-o", f"-k {self.dir} -c listen_addresses=''", "start"]), check=True,
                       stdout=subprocess.DEVNULL)
        self.conninfo = f"host={self.dir} dbname=postgres user=postgres"

    def sql(self, statement):
        return subprocess.run([f"{self.bin}/psql", "-X", "-q", "-A", "-t", "-d", self.conninfo, "-c", statement],
                              check=True, capture_output=True, text=True).stdout.strip()

    def close(self):
        subprocess.run(as_postgres([f"{self.bin}/pg_ctl", "-D", f"{self.dir}/data", "-m", "fast", "-w", "stop"]),
                       stdout=subprocess.DEVNULL)
        shutil.rmtree(self.dir, ignore_errors=True)


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Clients:
    """`count` clients, each asking for the page's main part every 2 s (spread over the 2 s);
    one of them also scrapes /metrics every 5 s. Request times are kept."""

    def __init__(self, port, count):
        self.port, self.stop, self.times, self.failures = port, threading.Event(), [], 0
        self.lock = threading.Lock()
        self.threads = [threading.Thread(target=self.poll, args=(i * 2.0 / count, "/", 2.0), daemon=True)
                        for i in range(count)]
        self.threads.append(threading.Thread(target=self.poll, args=(0, "/metrics", 5.0), daemon=True))
        for t in self.threads:
            t.start()

    def poll(self, delay, path, every):
        time.sleep(delay)
        while not self.stop.is_set():
            start = time.monotonic()
            try:
                connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
                connection.request("GET", path, headers={"X-VMerge-Part": "main"} if path == "/" else {})
                answer = connection.getresponse()
                answer.read()
                ok = answer.status == 200
                connection.close()
            except OSError:
                ok = False
            spent = time.monotonic() - start
            with self.lock:
                self.times.append(spent) if ok else None
                self.failures += 0 if ok else 1
            self.stop.wait(max(0, every - spent))

    def close(self):
        self.stop.set()
        for t in self.threads:
            t.join()


def run(args, db, jobs, out, watched):
    db.sql("TRUNCATE vmerge.jobs")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    subprocess.run([args.vmerge, "queue", "add", "--db", db.conninfo, "--out", out, jobs], check=True,
                   stdout=subprocess.DEVNULL)
    dashboard = clients = None
    if watched:
        dashboard = subprocess.Popen([args.vmerge, "dashboard", "--db", db.conninfo, "--listen", "127.0.0.1:0"],
                                     stderr=subprocess.PIPE, text=True)
        line = dashboard.stderr.readline()
        port = int(line.split("127.0.0.1:")[1].split("/")[0])
        clients = Clients(port, args.clients)
        time.sleep(2)  # every client has asked once
    start = time.monotonic()
    workers = [subprocess.Popen([args.vmerge, "worker", "--db", db.conninfo, "--name", f"w{i}", "--once",
                                 "--poll-interval", "0.2"], stderr=subprocess.DEVNULL) for i in range(2)]
    for w in workers:
        w.wait()
    wall = time.monotonic() - start
    done = db.sql("SELECT count(*) FROM vmerge.jobs WHERE state = 'done'")
    result = {"wall": wall, "done": int(done)}
    if watched:
        clients.close()
        result.update(dashboard_cpu=cpu_seconds(dashboard.pid), requests=len(clients.times),
                      failures=clients.failures, times=sorted(clients.times))
        dashboard.terminate()
        dashboard.wait()
    return result


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--vmerge", default=".build/release/vmerge")
    ap.add_argument("--work", default=bench.DEFAULT_WORK)
    args = ap.parse_args()
    args.vmerge = os.path.abspath(args.vmerge)
    clips = [os.path.join(os.path.abspath(args.work), c["file"]) for c in bench.inputs_A(os.path.abspath(args.work))["clips"]]
    db = Database()
    out = tempfile.mkdtemp(prefix="vmdash-out.")
    jobs = out + ".jsonl"
    try:
        with open(jobs, "w") as f:
            for i in range(2):
                f.write(json.dumps({"name": f"A{i}", "inputs": clips, "output": f"A{i}.mp4"}) + "\n")
        subprocess.run([args.vmerge, "queue", "init", "--db", db.conninfo], check=True, stdout=subprocess.DEVNULL)
        plain, watched = [], []
        for i in range(args.runs):
            for label, flag, results in (("no dashboard", False, plain), ("50 clients", True, watched)):
                r = run(args, db, jobs, os.path.join(out, "o"), flag)
                results.append(r)
                extra = ""
                if flag:
                    t = r["times"]
                    extra = (f", dashboard cpu {r['dashboard_cpu']:.2f} s, {r['requests']} requests "
                             f"(p50 {1000 * t[len(t) // 2]:.1f} ms, p95 {1000 * t[int(len(t) * 0.95)]:.1f} ms, "
                             f"max {1000 * t[-1]:.1f} ms), {r['failures']} failed")
                print(f"run {i + 1} {label}: wall {r['wall']:.2f} s, {r['done']} of 2 jobs done{extra}", flush=True)
        a = statistics.median(r["wall"] for r in plain)
        b = statistics.median(r["wall"] for r in watched)
        print(f"median wall: no dashboard {a:.2f} s, with {args.clients} clients {b:.2f} s: ratio {b / a:.3f} "
              f"({100 * (b / a - 1):+.1f}%)")
    finally:
        db.close()
        shutil.rmtree(out, ignore_errors=True)
        os.remove(jobs) if os.path.exists(jobs) else None


if __name__ == "__main__":
    main()
