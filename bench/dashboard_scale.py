#!/usr/bin/env python3
"""The dashboard on a big queue: a private PostgreSQL filled with 100,000 jobs (a realistic spread
of states, workers, times and names), `vmerge dashboard` on it, and the page's main part asked for
(as the page's script does), unfiltered and with a name filter: first one request at a time (what
one page costs), then by 24 clients at once, each asking again as soon as it has its answer (the
worst a room of operators can do). Prints p50/p90 latency of each.

    python3 bench/dashboard_scale.py --binary before=/tmp/vmerge-old --binary after=.build/release/vmerge
        [--jobs 100000] [--clients 24] [--seconds 20]

Each binary gets its own database, made by its own `queue init` (so each has its own schema) and
filled the same way, vacuumed and analysed as autovacuum would leave it.
"""
import argparse, http.client, os, statistics, subprocess, sys, threading, time, urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dashboard_load import Database  # noqa: E402  (a private PostgreSQL on a Unix socket)

# What operators type: a place (1 name in 16), an event and a place (1 in 256), a day (every job
# added that day), a month at a place, a job's own name, a short fragment (matches most names,
# in any case), and nothing at all.
TERMS = ["porto", "wedding-porto", "2026-11-02", "kyoto-2026-10", "hike-oslo-2026-09-14-1", "TR", "nomatch"]


def fill(db, jobs):
    """`jobs` jobs, added about one every 50 s over the last eight weeks (ids in that order): the
    newest 1 % queued (14 hours of backlog), 16 running on 8 workers, the rest ended (about 92 %
    done, 6 % failed, 2 % cancelled, by a hash of the id), each by one of 8 workers some minutes
    after it was added. Names are event-place-date-n (about 25 characters); specs carry three
    inputs and an output."""
    db.sql(f"""
        INSERT INTO vmerge.jobs (job_key, name, spec, state, attempts, worker, created_at, not_before,
            started_at, finished_at, heartbeat_at, lease_until, last_error)
        SELECT md5(g::text), name, jsonb_build_object(
                'inputs', jsonb_build_array('/srv/in/' || name || '/a.mov', '/srv/in/' || name || '/b.mov',
                    '/srv/in/' || name || '/c.mov'),
                'output', '/srv/merged/' || name || '.mp4'),
            state, CASE WHEN state = 'queued' THEN 0 ELSE 1 END,
            CASE WHEN state = 'queued' THEN NULL ELSE 'w' || (1 + g % 8) END,
            created, created,
            CASE WHEN state = 'queued' THEN NULL ELSE created + interval '2 min' END,
            CASE WHEN state IN ('queued', 'running') THEN NULL ELSE created + interval '5 min' END,
            CASE WHEN state = 'queued' THEN NULL WHEN state = 'running' THEN now() - interval '1 s'
                ELSE created + interval '5 min' END,
            CASE WHEN state = 'running' THEN now() + interval '30 s' END,
            CASE WHEN state = 'failed' THEN 'vmerge: a.mov: Invalid data found when processing input' END
        FROM (
            SELECT g, created,
                (ARRAY['trip','wedding','birthday','holiday','hike','concert','match','party','graduation',
                       'garden','dog','kids','beach','ski','school-play','reunion'])[1 + g % 16]
                || '-' || (ARRAY['lisbon','oslo','paris','kyoto','rome','berlin','lima','cairo','sydney',
                       'austin','porto','nice','bergen','quebec','tromso','seville'])[1 + (g / 16) % 16]
                || '-' || to_char(created, 'YYYY-MM-DD') || '-' || (g % 7) AS name,
                CASE WHEN g > {jobs} - 16 THEN 'running'
                     WHEN g > {jobs} * 0.99 THEN 'queued'
                     WHEN abs(hashint4(g)) % 50 = 0 THEN 'cancelled'
                     WHEN abs(hashint4(g)) % 50 IN (1, 2, 3) THEN 'failed'
                     ELSE 'done' END AS state
            FROM (SELECT g, now() - ({jobs} - g) * interval '50 s' AS created
                  FROM generate_series(1, {jobs}) AS g) AS t
        ) AS named
        """)
    db.sql("VACUUM ANALYZE vmerge.jobs")
    db.sql("VACUUM ANALYZE")


class Client:
    """One browser: one kept-alive connection (libmicrohttpd takes 32 at once from one address;
    a connection per request would count closing ones against that), made again after a failure."""

    def __init__(self, port):
        self.port, self.connection = port, None

    def ask(self, path):
        """One request for the page's main part: its time in seconds, or the reason it failed."""
        start = time.monotonic()
        try:
            if self.connection is None:
                self.connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
            self.connection.request("GET", path, headers={"X-VMerge-Part": "main"})
            answer = self.connection.getresponse()
            answer.read()
            if answer.status == 200:
                return time.monotonic() - start
            return f"HTTP {answer.status}"
        except (OSError, http.client.HTTPException) as error:
            if self.connection:
                self.connection.close()
            self.connection = None
            time.sleep(0.05)  # not a loop of failures
            return type(error).__name__


def path_for(term):
    return "/" if term is None else "/?" + urllib.parse.urlencode({"name": term})


def one_at_a_time(port, terms, rounds):
    """Each term asked `rounds` times in turn: the times of each."""
    client, times = Client(port), {term: [] for term in terms}
    for _ in range(rounds):
        for term in terms:
            spent = client.ask(path_for(term))
            if isinstance(spent, float):
                times[term].append(spent)
    return times


def at_once(port, clients, seconds, terms):
    """`clients` threads asking back to back for `seconds`, client i for terms[i % len]: every
    request's time, and why those that failed failed (reason: count)."""
    stop, lock, times, failures = threading.Event(), threading.Lock(), [], {}

    def client(i):
        path, own = path_for(terms[i % len(terms)]), Client(port)
        while not stop.is_set():
            spent = own.ask(path)
            with lock:
                if isinstance(spent, float):
                    times.append(spent)
                else:
                    failures[spent] = failures.get(spent, 0) + 1

    threads = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(clients)]
    for t in threads:
        t.start()
    time.sleep(seconds)
    stop.set()
    for t in threads:
        t.join()
    return sorted(times), failures


def quantile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * q))] if values else float("nan")


def ms(seconds):
    return f"{1000 * seconds:.1f}"


def measure(label, binary, args):
    db = Database()
    dashboard = None
    try:
        subprocess.run([binary, "queue", "init", "--db", db.conninfo], check=True, stdout=subprocess.DEVNULL)
        start = time.monotonic()
        fill(db, args.jobs)
        states = db.sql("SELECT state, count(*) FROM vmerge.jobs GROUP BY state ORDER BY state")
        print(f"{label}: {args.jobs} jobs filled and analysed in {time.monotonic() - start:.1f} s; "
              + states.replace("\n", ", "), flush=True)
        dashboard = subprocess.Popen([binary, "dashboard", "--db", db.conninfo, "--listen", "127.0.0.1:0"],
                                     stderr=subprocess.PIPE, text=True)
        line = dashboard.stderr.readline()
        port = int(line.split("127.0.0.1:")[1].split("/")[0])
        one_at_a_time(port, [None] + TERMS, 2)  # warm: the database's cache, the connection
        single = one_at_a_time(port, [None] + TERMS, args.rounds)
        for term, times in single.items():
            print(f"{label}: one at a time, {'unfiltered' if term is None else 'name ' + repr(term)}: "
                  f"p50 {ms(quantile(times, 0.5))} ms, p90 {ms(quantile(times, 0.9))} ms ({len(times)} requests)",
                  flush=True)
        results = {}
        for kind, terms in (("unfiltered", [None]), ("name filter", TERMS)):
            times, failed = at_once(port, args.clients, args.seconds, terms)
            results[kind] = times
            print(f"{label}: {args.clients} clients at once, {kind}: p50 {ms(quantile(times, 0.5))} ms, "
                  f"p90 {ms(quantile(times, 0.9))} ms, max {ms(times[-1]) if times else 'nan'} ms "
                  f"({len(times)} requests in {args.seconds} s, failed: {failed or 'none'})", flush=True)
        return single, results
    finally:
        if dashboard:
            dashboard.terminate()
            dashboard.wait()
        db.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", action="append", required=True, help="label=path of a vmerge to measure")
    ap.add_argument("--jobs", type=int, default=100_000)
    ap.add_argument("--clients", type=int, default=24)
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--rounds", type=int, default=10, help="requests per term, one at a time")
    args = ap.parse_args()
    summary = []
    for spec in args.binary:
        label, path = spec.split("=", 1)
        single, results = measure(label, os.path.abspath(path), args)
        unfiltered = single[None]
        named = [t for term, times in single.items() if term is not None for t in times]
        summary.append(
            f"| {label} | {ms(statistics.median(unfiltered))} | {ms(statistics.median(named))} / "
            f"{ms(max(named))} | {ms(quantile(results['unfiltered'], 0.5))} / "
            f"{ms(quantile(results['unfiltered'], 0.9))} | {ms(quantile(results['name filter'], 0.5))} / "
            f"{ms(quantile(results['name filter'], 0.9))} |")
    print("\n| binary | one page (ms, median) | name filter, one at a time (ms, median / max) | "
          f"{args.clients} clients unfiltered p50 / p90 (ms) | {args.clients} clients name filter p50 / p90 (ms) |")
    print("|---|---|---|---|---|")
    print("\n".join(summary))


if __name__ == "__main__":
    main()
