"""Where a command's CPU goes, by pipeline stage and by thread, and how busy it keeps the cores over
time: one run under `perf record` (cpu-clock samples, user and kernel), read back with `perf script`.

Stages are told apart by the library each sample's code is in, which is the same for vmerge and the
ffmpeg command: libavcodec is decoding (and the AAC coder, under 2 %), libx264 encoding, libswscale and
libavfilter filtering, libavformat demuxing and muxing. Threads are told apart by name: vmerge names
its decoding thread `vmerge-decode`, and the decoder's frame threads inherit it; ffmpeg 5.1 names
none of its threads.

Used by bench.py --stages; also runnable alone:
    python3 bench/stages.py -- vmerge -q -y a.mov b.mov -o out.mp4
"""

import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile

STAGES = (
    ("decode", ("libavcodec",)),
    ("encode", ("libx264", "libx265")),
    ("filter", ("libswscale", "libavfilter", "libzimg", "libswresample")),
    ("demux+mux", ("libavformat",)),
    ("kernel", ("[kernel",)),
    ("libc/avutil", ("libc.so", "libm.so", "ld-linux", "libavutil", "libpthread")),
    ("vmerge's own", ("vmerge", "libswift", "libFoundation", "libdispatch", "lib_FoundationICU")),
)
SAMPLE = re.compile(r"^\s*(.+?)\s+(\d+)\s+([\d.]+):\s+(\d+)\s+\S+\s+\((.*)\)\s*$")
BIN_S = 0.25
BARS = " .:-=+*#%@"  # 0-10 % ... 90-100 % of the cores busy


def available():
    """perf is installed and may profile this user's processes."""
    if not shutil.which("perf"):
        return False
    r = subprocess.run(["perf", "stat", "-e", "cpu-clock", "true"], capture_output=True)
    return r.returncode == 0


def stage_of(dso):
    name = os.path.basename(dso) if not dso.startswith("[") else dso
    for stage, prefixes in STAGES:
        if any(name.startswith(p) for p in prefixes):
            return stage
    return "other"


def profile(argv, cwd, cores, stderr_path, timeout=None):
    """Runs argv under perf; returns CPU seconds by stage and by thread name, and the timeline."""
    with tempfile.TemporaryDirectory(prefix="vmerge-stages-") as tmp:
        data = os.path.join(tmp, "perf.data")
        with open(stderr_path, "wb") as err:
            try:
                r = subprocess.run(["perf", "record", "-q", "-F", "499", "-e", "cpu-clock", "-o", data, "--"] + argv,
                                   cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
                                   timeout=timeout)
            except subprocess.TimeoutExpired:
                return {"failed": True, "error": f"killed after {timeout} s"}
        if r.returncode != 0:
            return {"failed": True, "error": f"perf record exit {r.returncode} (see {stderr_path})"}
        script = subprocess.run(["perf", "script", "-i", data, "-F", "comm,tid,time,period,ip,dso"],
                                capture_output=True, text=True)
    stages, threads = collections.Counter(), collections.Counter()
    bins = collections.Counter()
    start = end = None
    for line in script.stdout.splitlines():
        m = SAMPLE.match(line)
        if not m:
            continue
        comm, _, t, period, dso = m.groups()
        t, seconds = float(t), int(period) / 1e9
        start = t if start is None else start
        end = t
        stages[stage_of(dso)] += seconds
        threads[comm] += seconds
        bins[int((t - start) / BIN_S)] += seconds
    if start is None:
        return {"failed": True, "error": "perf recorded no samples"}
    wall = end - start
    n = int(wall / BIN_S) + 1
    busy = [min(1.0, bins[i] / (BIN_S * cores)) for i in range(n)]
    return {"cpu_s": round(sum(stages.values()), 2), "wall_s": round(wall, 2),
            "stages": {k: round(v, 2) for k, v in stages.most_common()},
            "threads": {k: round(v, 2) for k, v in threads.most_common()},
            "timeline": busy, "bin_s": BIN_S}


def timeline_text(busy, width=100):
    """The timeline in `width` characters, each the mean share of the cores busy in its slice."""
    if not busy:
        return ""
    step = max(1, -(-len(busy) // width))
    cells = [sum(busy[i:i + step]) / len(busy[i:i + step]) for i in range(0, len(busy), step)]
    return "".join(BARS[min(9, int(c * 10))] for c in cells)


def idle_summary(prof):
    """Share of the run's bins with both cores busy, and core-seconds left idle."""
    busy, b = prof["timeline"], prof["bin_s"]
    full = sum(1 for x in busy if x >= 0.9) / max(1, len(busy))
    idle = sum((1 - x) * b for x in busy)
    return full, idle


def print_profiles(title, profiles, cores, out):
    """profiles: [(label, profile)] as `profile` returns them."""
    p = lambda *a: print(*a, file=out)
    p(f"\n{title}: CPU seconds by stage (the library the code is in) and by thread, from perf")
    names = [s for s, _ in STAGES] + ["other"]
    p(f"{'command':<22}" + "".join(f"{s:>13}" for s in names) + f"{'total':>8}")
    for label, prof in profiles:
        if prof.get("failed"):
            p(f"{label:<22} failed: {prof['error']}")
            continue
        p(f"{label:<22}" + "".join(f"{prof['stages'].get(s, 0):13.2f}" for s in names) + f"{prof['cpu_s']:8.2f}")
    for label, prof in profiles:
        if prof.get("failed"):
            continue
        threads = ", ".join(f"{k} {v:.2f} s" for k, v in prof["threads"].items())
        full, idle = idle_summary(prof)
        p(f"  {label}: threads: {threads}")
        p(f"  {label}: both cores busy (>= 90 %) in {100 * full:.0f} % of the run; {idle:.1f} core-seconds idle "
          f"of {prof['wall_s'] * cores:.1f}")
        p(f"  {label}: |{timeline_text(prof['timeline'])}|  ({prof['wall_s']:.1f} s; ' ' idle ... '@' all cores)")


def main():
    if "--" not in sys.argv:
        sys.exit("usage: stages.py -- COMMAND...")
    argv = sys.argv[sys.argv.index("--") + 1:]
    cores = len(os.sched_getaffinity(0))
    prof = profile(argv, os.getcwd(), cores, "/dev/null")
    print_profiles(" ".join(argv[:3]) + " ...", [(os.path.basename(argv[0]), prof)], cores, sys.stdout)


if __name__ == "__main__":
    main()
