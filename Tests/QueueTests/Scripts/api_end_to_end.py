#!/usr/bin/env python3
"""A pipeline driving vmerge over HTTP, end to end (run by APIEndToEndTests with the test servers'
virtualenv, which has PyPI's jsonschema):

    api_end_to_end.py API TOKEN INPUT OUTPUTS RECEIVER EVENTS SCHEMA [--jobs 200]

Submits JOBS jobs to API (`vmerge dashboard`'s /api/v1/) from 8 threads: most are new jobs whose
events go to RECEIVER/hooks with metadata {"n": N}; 20 repeat an earlier request under its
Idempotency-Key (answered 200 with the first's job); 10 name a path outside the dashboard's roots
(refused 403). Then waits until every new job is done and RECEIVER's log (EVENTS: one JSON line per
POST, its signature checked by Python's hmac) holds a delivered job.completed for each. Checks: every
signature valid; each completed event's metadata is its job's and its report validates against
SCHEMA (jsonschema, not vmerge's code); no event for a refused job. Prints one JSON line of figures
and exits 0, or prints what failed and exits 1.
"""
import argparse, json, sys, threading, time, urllib.error, urllib.request

import jsonschema

ap = argparse.ArgumentParser()
for name in ("api", "token", "input", "outputs", "receiver", "events", "schema"):
    ap.add_argument(name)
ap.add_argument("--jobs", type=int, default=200)
ap.add_argument("--timeout", type=float, default=240)
args = ap.parse_args()

REPEATS, REFUSED = 20, 10
new_jobs = args.jobs - REPEATS - REFUSED
problems = []


def body(n, output=None, inputs=None):
    return {"name": f"e2e-{n}", "inputs": inputs or [args.input],
            "output": output or f"{args.outputs}/e2e-{n}.mp4", "options": {"min-duration": "0"},
            "notify": [args.receiver + "/hooks"], "metadata": {"n": n}}


def call(method, path, payload=None, key=None):
    request = urllib.request.Request(args.api + path, method=method,
                                     data=None if payload is None else json.dumps(payload).encode())
    request.add_header("Authorization", "Bearer " + args.token)
    if payload is not None:
        request.add_header("Content-Type", "application/json")
    if key:
        request.add_header("Idempotency-Key", key)
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, dict(answer.headers), json.loads(answer.read() or b"{}")
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), json.loads(error.read() or b"{}")


# What is sent: new jobs (each under its own key), repeats of the first 20, and refused ones.
submissions = [("new", n, body(n), f"order-{n}") for n in range(new_jobs)]
submissions += [("repeat", n, body(n), f"order-{n}") for n in range(REPEATS)]
submissions += [("refused", n, body(10_000 + n, inputs=["/etc/passwd"] if n % 2 else None,
                                    output=None if n % 2 else f"/tmp/elsewhere-{n}.mp4"), None)
                for n in range(REFUSED)]
# The repeats go last, so each meets its first's job.
answers = {}
lock = threading.Lock()
queue = list(reversed(submissions))


def submit():
    while True:
        with lock:
            if not queue:
                return
            kind, n, payload, key = queue.pop()
        status, headers, answer = call("POST", "/api/v1/jobs", payload, key)
        with lock:
            answers[(kind, n)] = (status, headers, answer)


threads = [threading.Thread(target=submit) for _ in range(8)]
started = time.monotonic()
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
submitted = time.monotonic() - started

ids = {}
for (kind, n), (status, headers, answer) in sorted(answers.items()):
    if kind == "new":
        if status != 201:
            problems.append(f"job {n}: answered {status} {answer}")
        ids[n] = answer.get("id")
    elif kind == "repeat":
        replayed = {k.lower(): v for k, v in headers.items()}.get("idempotent-replayed")
        if status != 200 or replayed != "true":
            problems.append(f"repeat {n}: answered {status} (replayed: {replayed}) {answer}")
    elif status != 403:
        problems.append(f"refused {n}: answered {status} {answer}")
for n in range(REPEATS):
    if answers[("repeat", n)][2].get("id") != ids.get(n):
        problems.append(f"repeat {n} answered job {answers[('repeat', n)][2].get('id')}, not {ids.get(n)}")


def events():
    try:
        with open(args.events) as file:
            return [json.loads(line) for line in file if line.strip()]
    except OSError:
        return []


def completed(logged):
    """Job name -> the delivered job.completed bodies."""
    found = {}
    for entry in logged:
        event = entry.get("body") or {}
        if entry.get("status") == 200 and event.get("type") == "job.completed":
            found.setdefault(event["data"]["job"]["name"], []).append(event)
    return found


deadline = time.monotonic() + args.timeout
done, all_done = 0, None
while time.monotonic() < deadline:
    done = call("GET", "/api/v1/jobs?state=done&limit=1")[2].get("total", 0)
    if done >= new_jobs and all_done is None:
        all_done = time.monotonic() - started
    if done >= new_jobs and len(completed(events())) >= new_jobs:
        break
    time.sleep(0.5)
waited = time.monotonic() - started

logged = events()
by_job = completed(logged)
if done != new_jobs:
    problems.append(f"{done} of {new_jobs} jobs done")
if len(by_job) != new_jobs:
    missing = sorted(set(f"e2e-{n}" for n in range(new_jobs)) - set(by_job))[:10]
    problems.append(f"job.completed delivered for {len(by_job)} of {new_jobs} jobs; missing {missing}")
invalid = [entry.get("id") for entry in logged if not entry.get("valid")]
if invalid:
    problems.append(f"{len(invalid)} events whose signature did not verify: {invalid[:5]}")
with open(args.schema) as file:
    validator = jsonschema.Draft202012Validator(json.load(file))
for name, bodies in sorted(by_job.items()):
    data = bodies[0]["data"]
    n = int(name.split("-")[1])
    if data.get("metadata") != {"n": n}:
        problems.append(f"{name}: metadata {data.get('metadata')}")
    errors = [e.message for e in validator.iter_errors(data.get("report"))]
    # "skipped": the killed worker had made it; the attempt that took the job over found it done.
    if errors or data["report"].get("status") not in ("ok", "skipped"):
        problems.append(f"{name}: report not valid: {errors[:3]} status {data['report'].get('status')}")
refused_events = [entry for entry in logged
                  if ((entry.get("body") or {}).get("data") or {}).get("job", {}).get("name", "").startswith("e2e-1000")]
if refused_events:
    problems.append(f"{len(refused_events)} events for refused jobs")

statuses = {}
for entry in logged:
    statuses[entry.get("status")] = statuses.get(entry.get("status"), 0) + 1
print(json.dumps({"submitted_seconds": round(submitted, 2), "all_done_seconds": round(all_done or -1, 2),
                  "all_delivered_seconds": round(waited, 2),
                  "jobs_done": done, "posts_by_status": {str(k): v for k, v in sorted(statuses.items())},
                  "completed_deliveries": sum(len(b) for b in by_job.values())}))
for problem in problems[:40]:
    print("problem: " + problem)
sys.exit(1 if problems else 0)
