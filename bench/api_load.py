#!/usr/bin/env python3
"""The job API under load: 50 clients submit 10,000 jobs (POST /api/v1/jobs, one short merge
each) to `vmerge dashboard` while two queue workers merge them, on a private PostgreSQL. One
submission in ten is sent twice at once, by two clients, with one Idempotency-Key: each pair must
answer one job. Prints the answer times (p50, p99, max), the submissions per second, the answers
by status, the jobs the workers finished meanwhile, and whether the queue holds exactly one job
per key and per output (no duplicate).

    python3 bench/api_load.py [--jobs 10000] [--clients 50] [--workers 2] [--vmerge PATH]
"""
import argparse, collections, http.client, json, os, queue, shutil, signal, subprocess, sys, tempfile, threading, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dashboard_load import Database, cpu_seconds  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLIP = os.path.join(ROOT, "fixtures", "a_none_640x480_30fps_aac44k_stereo.mov")
TOKEN = "bench-token-0123456789abcdef"


def percentile(sorted_times, fraction):
    return sorted_times[min(len(sorted_times) - 1, int(len(sorted_times) * fraction))]


class Client(threading.Thread):
    """Takes submissions off the shared queue and POSTs each, on one kept-alive connection."""

    def __init__(self, port, work, results, number):
        super().__init__(daemon=True)
        self.port, self.work, self.results, self.number = port, work, results, number
        self.connection = None

    def post(self, body, key):
        headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json", "Idempotency-Key": key}
        for attempt in range(2):
            try:
                if self.connection is None:
                    self.connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
                start = time.monotonic()
                self.connection.request("POST", "/api/v1/jobs", body=body, headers=headers)
                answer = self.connection.getresponse()
                data = answer.read()
                spent = time.monotonic() - start
                if answer.getheader("Connection", "").lower() == "close":
                    self.connection.close()
                    self.connection = None
                return answer.status, spent, json.loads(data or b"{}")
            except (OSError, http.client.HTTPException) as error:
                # A kept-alive connection the server closed: once more on a new one.
                self.connection = None
                if os.environ.get("API_LOAD_DEBUG"):
                    print(f"client {self.number}: {error!r}", file=sys.stderr)
                if attempt == 1:
                    return 0, 0.0, {}
        return 0, 0.0, {}

    def run(self):
        while True:
            item = self.work.get()
            if item is None:
                return
            index, key, body = item
            status, spent, answer = self.post(body, key)
            self.results.append((index, key, status, spent, answer.get("id")))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=10000)
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--workers", type=int, default=2, help="queue workers merging meanwhile")
    ap.add_argument("--vmerge", default=os.path.join(ROOT, ".build/release/vmerge"))
    args = ap.parse_args()
    args.vmerge = os.path.abspath(args.vmerge)
    db = Database()
    work = tempfile.mkdtemp(prefix="vmapi.")
    inputs, outputs = os.path.join(work, "in"), os.path.join(work, "out")
    os.makedirs(inputs)
    os.makedirs(outputs)
    shutil.copy(CLIP, os.path.join(inputs, "a.mov"))
    tokens = os.path.join(work, "tokens")
    with open(tokens, "w") as f:
        f.write(f"bench read,submit {TOKEN}\n")
    os.chmod(tokens, 0o600)
    dashboard = None
    workers = []
    try:
        subprocess.run([args.vmerge, "queue", "init", "--db", db.conninfo], check=True, stdout=subprocess.DEVNULL)
        dashboard = subprocess.Popen(
            [args.vmerge, "dashboard", "--db", db.conninfo, "--listen", "127.0.0.1:0", "--api-tokens", tokens,
             "--allow-inputs", inputs, "--allow-outputs", outputs, "--max-queued", str(args.jobs * 2),
             # Every client here is on loopback, one client to the server (as behind a proxy).
             "--connections-per-client", "100"],
            stderr=subprocess.PIPE, text=True)
        line = dashboard.stderr.readline()
        port = int(line.split("127.0.0.1:")[1].split("/")[0])
        workers = [subprocess.Popen([args.vmerge, "worker", "--db", db.conninfo, "--name", f"w{i}",
                                     "--poll-interval", "0.2"], stderr=subprocess.DEVNULL) for i in range(args.workers)]
        # Each job: a 0.5 s cut of the clip into its own output; one in ten sent twice at once.
        submissions = []
        for i in range(args.jobs):
            body = json.dumps({"name": f"j{i}", "inputs": [{"path": os.path.join(inputs, "a.mov"), "end": 0.5}],
                               "output": os.path.join(outputs, f"j{i}.mp4"), "options": {"min-duration": "0"}})
            submissions.append((i, f"key-{i}", body))
            if i % 10 == 0:
                submissions.append((i, f"key-{i}", body))
        work_queue = queue.Queue()
        results = []
        clients = [Client(port, work_queue, results, n) for n in range(args.clients)]
        for item in submissions:
            work_queue.put(item)
        for _ in clients:
            work_queue.put(None)
        start = time.monotonic()
        for c in clients:
            c.start()
        for c in clients:
            c.join()
        wall = time.monotonic() - start
        done_meanwhile = int(db.sql("SELECT count(*) FROM vmerge.jobs WHERE state = 'done'"))
        dashboard_cpu = cpu_seconds(dashboard.pid)
        for w in workers:
            w.send_signal(signal.SIGTERM)
        for w in workers:
            w.wait()
        times = sorted(r[3] for r in results if r[2] in (200, 201))
        statuses = collections.Counter(r[2] for r in results)
        by_key = collections.defaultdict(set)
        for _, key, status, _, job in results:
            if status in (200, 201):
                by_key[key].add(job)
        split_keys = sum(1 for ids in by_key.values() if len(ids) != 1)
        rows = db.sql("SELECT count(*), count(DISTINCT job_key), count(DISTINCT spec->>'output') FROM vmerge.jobs")
        jobs, keys, outs = (int(x) for x in rows.split("|"))
        print(f"{len(results)} submissions ({args.jobs} jobs, {len(results) - args.jobs} repeats under one key) "
              f"by {args.clients} clients in {wall:.1f} s: {len(results) / wall:.0f} a second")
        print(f"answers: {dict(sorted(statuses.items()))}; answer time p50 {1000 * percentile(times, 0.5):.1f} ms, "
              f"p99 {1000 * percentile(times, 0.99):.1f} ms, max {1000 * times[-1]:.1f} ms")
        print(f"queue: {jobs} jobs, {keys} distinct job keys, {outs} distinct outputs; keys answered with more than "
              f"one job: {split_keys}; duplicates: {jobs - outs}")
        print(f"workers finished {done_meanwhile} jobs meanwhile; dashboard cpu {dashboard_cpu:.1f} s")
        ok = jobs == args.jobs == keys == outs and split_keys == 0 and statuses.get(201, 0) == args.jobs
        print("no duplicate job, every key one job" if ok else "FAILED: duplicates or lost submissions")
        return 0 if ok else 1
    finally:
        for w in workers:
            if w.poll() is None:
                w.kill()
        if dashboard is not None:
            dashboard.terminate()
            dashboard.wait()
        db.close()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
