#!/usr/bin/env python3
"""Benchmark vmerge against the equivalent single ffmpeg command (python3 stdlib only).

    python3 bench/bench.py [--sets A,P,H,B,S,D] [--rounds 3] [--work DIR] [--vmerge PATH]

Inputs are generated once with the ffmpeg CLI into the work directory (default
<repo>/bench-work, gitignored) and reused when present. Each command's wall time, CPU time
(user+sys) and peak RSS come from os.wait4 on that one child. Tables go to stdout, progress to
stderr, the full results to <work>/results-<timestamp>.json. Utilisation = CPU s / (wall s x the
cores this process may use): how busy a command kept them. See BENCH.md.
"""

import argparse
import concurrent.futures
import datetime
import json
import math
import os
import platform
import re
import resource
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import objectstore  # noqa: E402
import renditions  # noqa: E402
import stages  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_WORK = os.path.join(REPO, "bench-work")
DEFAULT_VMERGE = "/tmp/vm-bench-build/release/vmerge"
T0 = time.monotonic()

# What vmerge does by default, written as one ffmpeg filter graph (per input; concat joins them).
# The ffmpeg CLI turns inputs upright itself (autorotate), so the crop sees the upright picture.
CROP = "crop='min(iw,ih*4/3)':'min(ih,iw*3/4)'"
# The reference's crop of an 8-bit clip: the exact centre, as vmerge cuts it. FFmpeg's crop rounds
# an odd offset in a 4:2:0 picture down to even (a portrait 1080x1920's 4:3 window: row 554, not
# 555), which put the reference one row off (BENCH.md, issue 37 addendum). Above 8 bits its exact
# crop moves the chroma plane wrongly (README), so those keep the rounded one.
CROP_EXACT = "crop=w='min(iw,ih*4/3)':h='min(ih,iw*3/4)':exact=1"
# Colour as vmerge decides it for untagged clips (the bench sets are untagged): HD is taken as
# BT.709 (no matrix change), SD as BT.601 and converted to BT.709 (swscale's default input matrix
# is BT.601, so out_color_matrix=bt709 does exactly that).
SCALE_HD = "scale=320:240:flags=bicubic:out_range=tv"
SCALE_SD = "scale=320:240:flags=bicubic:out_color_matrix=bt709:out_range=tv"


# The lossless reference converts SD exactly instead: the same bicubic scaling, the matrix in
# floating point (zimg) with a chroma sample for every pixel, then subsampled. SCALE_SD's own
# conversion (swscale, via RGB with shared chroma) is 39 dB from that, which made the ffmpeg
# command's output the measure of "correct" for set B (BENCH.md, issue 12 addendum).
SCALE_SD_EXACT = ("scale=320:240:flags=bicubic:out_range=tv,format=yuv444p16,"
                  "zscale=min=170m:m=709:rin=limited:r=limited:d=none,format=yuv444p16,scale=flags=bicubic")


def vchain(hd, exact=False, centre=False):
    scale = SCALE_HD if hd else (SCALE_SD_EXACT if exact else SCALE_SD)
    return (CROP_EXACT if centre else CROP) + "," + scale + ",setsar=1,fps=30,format=yuv420p"


_HD = {}


def is_hd(path):
    """Whether players (and vmerge) take an untagged clip as BT.709: 1280 wide or 720 high and up."""
    if path not in _HD:
        out = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
                              "stream=width,height", "-of", "csv=p=0", path], capture_output=True, text=True).stdout
        w, h = (int(v) for v in out.strip().split(",")[:2])
        _HD[path] = w >= 1280 or h >= 720
    return _HD[path]
_8BIT = {}
def is_8bit(path):
    """Whether the clip's video is 8 bits a sample (its pixel format names no more)."""
    if path not in _8BIT:
        out = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
                              "stream=pix_fmt", "-of", "csv=p=0", path], capture_output=True, text=True).stdout
        _8BIT[path] = not re.search(r"p(9|10|12|14|16)", out.strip())
    return _8BIT[path]


ACHAIN = "aresample=44100,aformat=sample_fmts=fltp:sample_rates=44100:channel_layouts=stereo"
X264 = ["-c:v", "libx264", "-preset", "medium", "-crf", "23", "-profile:v", "high"]
BT709 = ["-color_primaries", "bt709", "-color_trc", "bt709", "-colorspace", "bt709", "-color_range", "tv"]
AAC = ["-c:a", "aac", "-b:a", "96k"]
FF = ["ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-y"]
MAX_INLINE_GRAPH = 100_000  # longer graphs go through -filter_complex_script (one argv string <= 128 KiB)


def log(msg):
    print(f"[{time.monotonic() - T0:7.1f}s] {msg}", file=sys.stderr, flush=True)


def die(msg):
    log("error: " + msg)
    sys.exit(1)


# ---------------------------------------------------------------------------------------------
# Running one measured command


def measure(argv, cwd, stderr_path, timeout, mem_limit_kib):
    """Runs argv; returns wall/CPU/RSS from os.wait4 on the child, or a failure record."""
    load_at_start = round(os.getloadavg()[0], 2)
    with open(stderr_path, "wb") as err:
        start = time.monotonic()
        proc = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)
        killed = []
        done = threading.Event()

        def watchdog():
            # Kills the child past the timeout or when its RSS would starve the machine.
            while not done.wait(0.5):
                reason = None
                if time.monotonic() - start > timeout:
                    reason = f"killed by the bench after {timeout:.0f} s"
                else:
                    try:
                        with open(f"/proc/{proc.pid}/statm") as f:
                            rss_kib = int(f.read().split()[1]) * (os.sysconf("SC_PAGE_SIZE") // 1024)
                        if mem_limit_kib and rss_kib > mem_limit_kib:
                            reason = f"killed by the bench at RSS {rss_kib / 1024:.0f} MiB (limit {mem_limit_kib / 1024:.0f} MiB)"
                    except (OSError, ValueError, IndexError):
                        pass
                if reason:
                    killed.append(reason)
                    try:
                        os.kill(proc.pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                    return

        thread = threading.Thread(target=watchdog, daemon=True)
        thread.start()
        _, status, ru = os.wait4(proc.pid, 0)
        wall = time.monotonic() - start
        done.set()
        proc.returncode = os.waitstatus_to_exitcode(status)
    rec = {
        "loadavg_1min_at_start": load_at_start,
        "wall_s": round(wall, 3),
        "cpu_s": round(ru.ru_utime + ru.ru_stime, 3),
        "user_s": round(ru.ru_utime, 3),
        "sys_s": round(ru.ru_stime, 3),
        "rss_kib": ru.ru_maxrss,  # KiB on Linux
        "exit": proc.returncode,
    }
    if proc.returncode != 0 or killed:
        rec["failed"] = True
        first = killed[0] if killed else ""
        if not first:
            with open(stderr_path, "rb") as f:
                for line in f.read().decode("utf-8", "replace").splitlines():
                    if line.strip():
                        first = line.strip()
                        break
        rec["error"] = first or f"exit status {proc.returncode}"
    return rec


def run_checked(argv, cwd, what):
    r = subprocess.run(argv, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if r.returncode != 0:
        die(f"{what} failed ({r.returncode}): {' '.join(argv[:12])} ...\n{r.stderr.strip()[-2000:]}")
    return r


def ffprobe_json(path, cwd, *entries):
    r = run_checked(["ffprobe", "-v", "error", *entries, "-of", "json", path], cwd, "ffprobe")
    return json.loads(r.stdout)


def video_frames(path, cwd):
    r = subprocess.run(
        ["ffprobe", "-v", "error", "-select_streams", "v:0", "-count_packets", "-show_entries",
         "stream=nb_read_packets", "-of", "csv=p=0", path],
        cwd=cwd, capture_output=True, text=True)
    try:
        return int(r.stdout.strip().split(",")[0])
    except ValueError:
        return None


def probe_clip(path, cwd):
    info = ffprobe_json(path, cwd, "-show_entries",
                        "stream=codec_type,codec_name,profile,width,height,pix_fmt,duration,nb_frames,"
                        "sample_rate,channels:stream_side_data=rotation")
    out = {"file": path}
    for s in info["streams"]:
        if s["codec_type"] == "video" and "video" not in out:
            rot = None
            for sd in s.get("side_data_list", []):
                if "rotation" in sd:
                    rot = sd["rotation"]
            out["video"] = {k: s.get(k) for k in ("codec_name", "profile", "width", "height", "pix_fmt", "nb_frames")}
            out["video"]["duration"] = float(s["duration"])
            out["video"]["rotation"] = rot
        elif s["codec_type"] == "audio" and "audio" not in out:
            out["audio"] = {"codec_name": s.get("codec_name"), "sample_rate": s.get("sample_rate"),
                            "channels": s.get("channels"), "duration": float(s.get("duration", "nan"))}
    return out


# ---------------------------------------------------------------------------------------------
# Inputs


def lavfi_source(size, rate, dur, seed, freq):
    video = f"testsrc2=size={size}:rate={rate}:duration={dur}"
    audio = f"sine=frequency={freq}:sample_rate=44100:duration={dur}"
    noise = f"noise=alls=12:allf=t+u:all_seed={seed}"
    return ["-f", "lavfi", "-i", video, "-f", "lavfi", "-i", audio], noise


def make_portrait(src, dst, cwd):
    """Remuxes src with the display matrix an iPhone writes for portrait (ffprobe: rotation -90).

    FFmpeg 5.1's `-metadata:s:v:0 rotate=90` stores the opposite matrix (ffprobe: rotation 90),
    so the variants are tried in order and the result is checked with ffprobe."""
    variants = [
        ([], ["-metadata:s:v:0", "rotate=270"]),
        ([], ["-metadata:s:v:0", "rotate=90"]),
        (["-display_rotation:v:0", "-90"], []),  # FFmpeg >= 7
    ]
    for pre, post in variants:
        r = subprocess.run(FF + pre + ["-i", src, "-map", "0", "-c", "copy"] + post + [dst],
                           cwd=cwd, capture_output=True, text=True)
        if r.returncode == 0 and probe_clip(dst, cwd)["video"]["rotation"] in (-90, -90.0):
            return
    die(f"could not write a -90 degree display matrix into {dst}")


def load_manifest(path, spec):
    try:
        with open(path) as f:
            m = json.load(f)
    except (OSError, ValueError):
        return None
    if m.get("spec") != spec:
        return None
    base = os.path.dirname(path)
    if all(os.path.isfile(os.path.join(base, "..", c["file"])) for c in m["clips"]):
        return m
    return None


def save_manifest(path, spec, clips, gen_s):
    with open(path + ".part", "w") as f:
        json.dump({"spec": spec, "clips": clips, "generate_s": round(gen_s, 1)}, f, indent=1)
    os.replace(path + ".part", path)


def cached_set(work, spec, make_clips):
    """A set's inputs, generated once: `make_clips()` writes them under work/<set>/ and returns
    their probes; later runs reuse them while the manifest's spec is unchanged."""
    d = os.path.join(work, spec["set"])
    man = os.path.join(d, "manifest.json")
    m = load_manifest(man, spec)
    if m:
        return m
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    t = time.monotonic()
    clips = make_clips()
    save_manifest(man, spec, clips, time.monotonic() - t)
    return load_manifest(man, spec)


def encode_clip(work, name, src_args, codec_args, what):
    """Encodes one generated clip to a temporary name, then moves it into place."""
    tmp = os.path.join(os.path.dirname(name), "tmp-" + os.path.basename(name))
    run_checked(FF + src_args + codec_args + ["-c:a", "aac", "-b:a", "128k", "-ac", "2", "-shortest", tmp],
                work, what)
    os.replace(os.path.join(work, tmp), os.path.join(work, name))


def encode_set_clip(work, name, src, codec_args, portrait, what):
    """Encodes one clip of a set (A, P, K) to `name`, turned portrait (rotation -90) when asked;
    its probe."""
    landscape = os.path.join(os.path.dirname(name), "landscape-" + os.path.basename(name)) if portrait else name
    encode_clip(work, landscape, src, codec_args, what)
    if portrait:
        make_portrait(landscape, name, work)
        os.remove(os.path.join(work, landscape))
    return probe_clip(name, work)


def inputs_A(work):
    spec = {"set": "A", "n": 6, "size": "1920x1080", "fps": 30, "dur": 10, "portrait": [1, 3, 5],
            "v": "libx264 veryfast high 12M/12M/24M", "a": "aac 44.1k stereo 128k", "rev": 2}

    def make_clips():
        clips = []
        for i in range(spec["n"]):
            portrait = i in spec["portrait"]
            name = f"A/a{i}.mov"
            log(f"generating {name} (1920x1080 H.264 High 12 Mb/s, 10 s{', portrait' if portrait else ''})")
            src, noise = lavfi_source("1920x1080", 30, 10, 100 + i, 220 + 110 * i)
            clips.append(encode_set_clip(work, name, src, ["-vf", noise, "-c:v", "libx264", "-preset", "veryfast",
                                                            "-profile:v", "high", "-pix_fmt", "yuv420p", "-b:v", "12M",
                                                            "-maxrate", "12M", "-bufsize", "24M", "-g", "30"],
                                          portrait, "generate A"))
        return clips

    return cached_set(work, spec, make_clips)


def set_A_files(work):
    """Set A's clips (generated once) and their video durations, for the sets made of them (O, R)."""
    m = inputs_A(work)
    return [c["file"] for c in m["clips"]], [c["video"]["duration"] for c in m["clips"]]


def inputs_P(work):
    """Phone-like footage (issue 36): 1080p30 H.264 High with B-frames, temporal sensor-like noise
    in every frame strong enough that the decoder works as hard as on real footage, 12 to 40 Mb/s,
    8-10 s each, 3 portrait (rotation -90)."""
    spec = {"set": "P", "n": 6, "size": "1920x1080", "fps": 30, "portrait": [1, 3, 5],
            "durs": [10, 8, 9, 10, 8, 9], "rates_mbps": [12, 20, 40, 16, 30, 24],
            "v": "libx264 veryfast high, 3 B-frames, noise alls=28 temporal", "a": "aac 44.1k stereo 128k", "rev": 1}

    def make_clips():
        clips = []
        for i in range(spec["n"]):
            portrait = i in spec["portrait"]
            dur, rate = spec["durs"][i], spec["rates_mbps"][i]
            name = f"P/p{i}.mov"
            log(f"generating {name} (1920x1080 H.264 High {rate} Mb/s, {dur} s{', portrait' if portrait else ''})")
            src, _ = lavfi_source("1920x1080", 30, dur, 700 + i, 250 + 110 * i)
            noise = f"noise=alls=28:allf=t+u:all_seed={700 + i}"
            clips.append(encode_set_clip(work, name, src, ["-vf", noise, "-c:v", "libx264", "-preset", "veryfast",
                                                            "-profile:v", "high", "-pix_fmt", "yuv420p", "-bf", "3",
                                                            "-b:v", f"{rate}M", "-maxrate", f"{rate}M",
                                                            "-bufsize", f"{2 * rate}M", "-g", "30"],
                                          portrait, "generate P"))
        return clips

    return cached_set(work, spec, make_clips)


def inputs_H(work):
    spec = {"set": "H", "n": 3, "size": "1920x1080", "fps": 30, "dur": 5,
            "v": "libx265 ultrafast main10 hvc1", "a": "aac 44.1k stereo 128k", "rev": 1}

    def make_clips():
        clips = []
        for i in range(spec["n"]):
            name = f"H/h{i}.mov"
            log(f"generating {name} (1920x1080 HEVC Main 10, 5 s)")
            src, noise = lavfi_source("1920x1080", 30, 5, 200 + i, 330 + 110 * i)
            encode_clip(work, name, src, ["-vf", noise + ",format=yuv420p10le", "-c:v", "libx265",
                                          "-preset", "ultrafast", "-x265-params", "log-level=error",
                                          "-pix_fmt", "yuv420p10le", "-tag:v", "hvc1", "-b:v", "12M"], "generate H")
            clips.append(probe_clip(name, work))
        return clips

    return cached_set(work, spec, make_clips)


def inputs_K(work):
    """4K60 HEVC Main 10, as phones record their largest (issue 36: what the decoder may skip
    must hold there too); the second clip portrait."""
    spec = {"set": "K", "n": 2, "size": "3840x2160", "fps": 60, "dur": 3, "portrait": [1],
            "v": "libx265 ultrafast main10 hvc1 40M", "a": "aac 44.1k stereo 128k", "rev": 1}

    def make_clips():
        clips = []
        for i in range(spec["n"]):
            portrait = i in spec["portrait"]
            name = f"K/k{i}.mov"
            log(f"generating {name} (3840x2160 60 fps HEVC Main 10, 3 s{', portrait' if portrait else ''})")
            src, noise = lavfi_source("3840x2160", 60, 3, 900 + i, 440 + 110 * i)
            clips.append(encode_set_clip(work, name, src, ["-vf", noise + ",format=yuv420p10le", "-c:v", "libx265",
                                                           "-preset", "ultrafast", "-x265-params", "log-level=error",
                                                           "-pix_fmt", "yuv420p10le", "-tag:v", "hvc1", "-b:v", "40M"],
                                         portrait, "generate K"))
        return clips

    return cached_set(work, spec, make_clips)


def inputs_B(work):
    """200 separate 1 s clips, encoded two at a time.

    (One 200 s encode cut by the segment muxer is faster, but its segments start their audio
    ~48 ms before the video with negative timestamps and the first one its video at 66 ms; the
    ffmpeg CLI and vmerge then line frames up one frame apart and the PSNR says nothing.)"""
    spec = {"set": "B", "n": 200, "size": "640x480", "fps": 30, "dur": 1,
            "v": "libx264 veryfast crf 20 high", "a": "aac 44.1k stereo 128k", "rev": 2}

    def one(i):
        name = f"B/b{i:04d}.mov"
        src, noise = lavfi_source("640x480", 30, 1, 1000 + i, 300 + 5 * i)
        encode_clip(work, name, src, ["-vf", noise, "-c:v", "libx264", "-preset", "veryfast", "-crf", "20",
                                      "-profile:v", "high", "-pix_fmt", "yuv420p", "-threads", "1"], "generate B")
        return probe_clip(name, work)

    def make_clips():
        n = spec["n"]
        log(f"generating B/b0000.mov..b{n - 1:04d}.mov ({n} x 1 s 640x480 H.264 + AAC, {os.cpu_count()} at a time)")
        with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
            clips = list(pool.map(one, range(n)))
        bad = [c["file"] for c in clips
               if abs(c["video"]["duration"] - 1.0) > 0.02 or "audio" not in c
               or abs(c["audio"]["duration"] - 1.0) > 0.03]
        if bad:
            die(f"clips without audio or not 1 s long: {bad[:5]}")
        log(f"B: {n} clips, video {sum(c['video']['duration'] for c in clips):.1f} s in all")
        return clips

    return cached_set(work, spec, make_clips)


def inputs_S(work):
    """High frame rates, as phones record slow motion: most pictures are dropped by the 30 fps
    output. H.264 and HEVC with non-reference B-frames, and an all-reference stream (P-frames
    only) where nothing can be left undecoded."""
    spec = {"set": "S", "size": "1920x1080", "rev": 1,
            "clips": [["s240.mov", 240, 2, "h264"], ["s120.mov", 120, 3, "hevc"], ["s60.mov", 60, 5, "h264"],
                      ["s60ref.mov", 60, 5, "h264-p"]],
            "v": "libx264 veryfast 40M (P-only for s60ref) / libx265 ultrafast 30M", "a": "aac 44.1k stereo 128k"}

    def make_clips():
        clips = []
        for i, (base, rate, dur, kind) in enumerate(spec["clips"]):
            name = f"S/{base}"
            log(f"generating {name} (1920x1080 {kind} {rate} fps, {dur} s)")
            src, noise = lavfi_source("1920x1080", rate, dur, 300 + i, 440 + 110 * i)
            if kind == "hevc":
                codec = ["-c:v", "libx265", "-preset", "ultrafast", "-x265-params", "log-level=error:bframes=4",
                         "-tag:v", "hvc1", "-b:v", "30M"]
            else:
                codec = ["-c:v", "libx264", "-preset", "veryfast", "-profile:v", "high", "-b:v", "40M"]
                codec += ["-bf", "0"] if kind == "h264-p" else []
            encode_clip(work, name, src, ["-vf", noise, "-pix_fmt", "yuv420p", "-g", str(rate)] + codec, "generate S")
            clips.append(probe_clip(name, work))
        return clips

    return cached_set(work, spec, make_clips)


def inputs_D(work):
    """Slow motion encoded the way phone encoders are asked to for it: a fixed rate of frames
    other frames are predicted from (Apple's AVVideoAverageNonDroppableFrameRateKey; 30 per
    second here), every frame in between droppable (not a reference). Fixed GOP patterns without
    a B-pyramid and without scene cuts (x264 gave up its B-frames part-way through otherwise):
    H.264 240 fps with 7 B-frames between P-frames, HEVC 120 fps with 3, H.264 60 fps with 1, and
    H.264 120 fps with 3 whose every frame is off the grid by up to 0.3 of a frame (a phone's
    variable rate, 1/90000 time base)."""
    spec = {"set": "D", "size": "1920x1080", "rev": 4,
            "clips": [["d240.mov", 240, 3, "h264", 7], ["d120.mov", 120, 3, "hevc", 3], ["d60.mov", 60, 5, "h264", 1],
                      ["d120j.mov", 120, 3, "h264-jitter", 3]],
            "v": "30 non-droppable frames/s: libx264 veryfast 40M b-pyramid none b-adapt 0 scenecut 0 / libx265 ultrafast 30M",
            "a": "aac 44.1k stereo 128k"}

    def make_clips():
        clips = []
        for i, (base, rate, dur, kind, bframes) in enumerate(spec["clips"]):
            name = f"D/{base}"
            log(f"generating {name} (1920x1080 {kind} {rate} fps, {dur} s, {bframes} droppable B-frames per P)")
            src, noise = lavfi_source("1920x1080", rate, dur, 500 + i, 470 + 110 * i)
            filters = ["-vf", noise]
            if kind == "h264-jitter":
                # In the source's own graph: after -vf the encoder's 1/120 time base rounds it away.
                src[3] += f",{noise},settb=1/90000,setpts='(N+0.3*sin(N*2.3))/{rate}/TB'"
                filters = ["-fps_mode", "passthrough", "-video_track_timescale", "90000"]
            if kind == "hevc":
                codec = ["-c:v", "libx265", "-preset", "ultrafast", "-x265-params",
                         f"log-level=error:bframes={bframes}:b-pyramid=0:b-adapt=0:scenecut=0", "-tag:v", "hvc1", "-b:v", "30M"]
            else:
                codec = ["-c:v", "libx264", "-preset", "veryfast", "-profile:v", "high", "-b:v", "40M",
                         "-bf", str(bframes), "-x264-params", "b-pyramid=none:b-adapt=0:scenecut=0"]
            encode_clip(work, name, src, filters + ["-pix_fmt", "yuv420p", "-g", str(rate)] + codec, "generate D")
            clips.append(probe_clip(name, work))
        return clips

    return cached_set(work, spec, make_clips)


def print_decode_shares(res, label, out):
    for d in res["decode"]:
        packets, skipped = d.get("video_packets", 0), d.get("skipped", 0)
        print(f"  {d['file']}: {skipped} of {packets} video packets not decoded "
              f"({100 * skipped / max(packets, 1):.0f} %)", file=out)
    total = sum(d.get("video_packets", 0) for d in res["decode"])
    skipped = sum(d.get("skipped", 0) for d in res["decode"])
    print(f"  set {label}: {skipped} of {total} video packets not decoded ({100 * skipped / max(total, 1):.0f} %)",
          file=out)


def decode_shares(args, files, cid):
    """One more (untimed) vmerge run with a report: each clip's video packets and the share left
    undecoded."""
    work = args.work
    report = os.path.join(work, f"out/{cid}-decode.json")
    cmd = vmerge_cmd(args.vmerge, files, f"out/{cid}-decode.mp4", 0) + ["--report", report]
    run_checked(cmd, work, f"{cid} decode report")
    with open(report) as f:
        inputs = json.load(f)["inputs"]
    return [{"file": os.path.basename(i["path"]), **(i.get("decode") or {})} for i in inputs]


# ---------------------------------------------------------------------------------------------
# Commands


def merge_graph(durations, audio=True, hd=None, exact=False, centre=None):
    """The ffmpeg filter graph equivalent to vmerge's defaults for these clips.

    Each clip's audio is padded/trimmed to its video's duration, as vmerge does."""
    parts, pads = [], []
    for i, dur in enumerate(durations):
        parts.append(f"[{i}:v]{vchain(hd[i] if hd else True, exact, centre[i] if centre else False)}[v{i}]")
        pads.append(f"[v{i}]")
        if audio:
            parts.append(f"[{i}:a]{ACHAIN},apad,atrim=end={dur:.6f}[a{i}]")
            pads.append(f"[a{i}]")
    parts.append("".join(pads) + f"concat=n={len(durations)}:v=1:a={1 if audio else 0}[v]" + ("[a]" if audio else ""))
    return ";".join(parts)


def graph_args(graph, script_path, work):
    """-filter_complex GRAPH, or the graph in a file (script_path, relative to work) when long."""
    if len(graph) <= MAX_INLINE_GRAPH:
        return ["-filter_complex", graph]
    with open(os.path.join(work, script_path), "w") as f:
        f.write(graph)
    return ["-filter_complex_script", script_path]


def ffmpeg_merge_cmd(files, durations, out, script_path, work):
    ins = [a for f in files for a in ("-i", f)]
    hd = [is_hd(os.path.join(work, f)) for f in files]
    return (FF + ins + graph_args(merge_graph(durations, hd=hd), script_path, work) + ["-map", "[v]", "-map", "[a]"]
            + X264 + BT709 + AAC + ["-movflags", "+faststart", out])


def reference_cmd(files, durations, out, script_path, work):
    """Same graph with SD converted exactly, lossless video (audio kept so concat times each segment
    as in the real run)."""
    ins = [a for f in files for a in ("-i", f)]
    hd = [is_hd(os.path.join(work, f)) for f in files]
    centre = [is_8bit(os.path.join(work, f)) for f in files]
    return (FF + ins + graph_args(merge_graph(durations, hd=hd, exact=True, centre=centre), script_path, work)
            + ["-map", "[v]", "-map", "[a]"]
            + ["-c:v", "libx264", "-qp", "0", "-preset", "ultrafast"] + BT709 + ["-c:a", "pcm_s16le", out])


def vmerge_cmd(vmerge, files, out, min_duration, extra=()):
    cmd = [vmerge, "-q", "-y", *extra]
    if min_duration is not None:
        cmd += ["--min-duration", str(min_duration)]
    return cmd + files + ["-o", out]


def floor_cmd(files):
    ins = [a for f in files for a in ("-noautorotate", "-i", f)]
    maps = [a for i in range(len(files)) for a in ("-map", f"{i}:v")]
    return FF + ins + maps + ["-f", "null", "-"]


def psnr(out, ref, cwd, stderr_path):
    r = subprocess.run(["ffmpeg", "-nostdin", "-hide_banner", "-nostats", "-i", out, "-i", ref,
                        "-lavfi", "[0:v][1:v]psnr", "-f", "null", "-"],
                       cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    with open(stderr_path, "w") as f:
        f.write(r.stderr)
    m = re.findall(r"PSNR y:\S+ u:\S+ v:\S+ average:(\S+)", r.stderr)
    if r.returncode != 0 or not m:
        return None
    return float("inf") if m[-1] == "inf" else float(m[-1])


# ---------------------------------------------------------------------------------------------
# Cases


def med(runs, key):
    vals = [r[key] for r in runs if not r.get("failed")]
    return statistics.median(vals) if vals else None


def reference(args, cid, files, durations, ref_from=None):
    """Renders case `cid`'s lossless reference, refs/<cid>.mkv, unless the one there was made by
    the same command from the same inputs; whether there is one."""
    work = args.work
    os.makedirs(os.path.join(work, "refs"), exist_ok=True)
    ref = f"refs/{cid}.mkv"
    if ref_from:  # e.g. B1000 = the B200 reference five times over
        src_ref, times = ref_from
        key = json.dumps({"concat": src_ref, "times": times, "src_mtime": os.path.getmtime(os.path.join(work, src_ref))})
        cmd = None
    else:
        cmd = reference_cmd(files, durations, ref, f"refs/{cid}.graph", work)
        # A long graph goes in a file: the key holds its text, not only its name.
        script = os.path.join(work, f"refs/{cid}.graph")
        graph = open(script).read() if "-filter_complex_script" in cmd and os.path.isfile(script) else None
        key = json.dumps({"cmd": cmd, "graph": graph,
                          "inputs_mtime": [os.path.getmtime(os.path.join(work, f)) for f in files]})
    keyfile = os.path.join(work, ref + ".key")
    cached = os.path.isfile(os.path.join(work, ref)) and os.path.isfile(keyfile) and open(keyfile).read() == key
    if not cached:
        log(f"{cid}: reference render (lossless x264 in .mkv)")
        t = time.monotonic()
        if cmd is None:
            lst = os.path.join(work, f"refs/{cid}.txt")
            with open(lst, "w") as f:
                f.write("".join(f"file '{os.path.basename(src_ref)}'\n" for _ in range(times)))
            cmd = FF + ["-f", "concat", "-safe", "0", "-i", f"refs/{cid}.txt", "-map", "0", "-c", "copy", ref]
        rec = measure(cmd, work, os.path.join(work, f"logs/{cid}-ref.err"), args.timeout, args.mem_limit_kib)
        if rec.get("failed"):
            log(f"{cid}: reference render failed: {rec['error']}")
            return False
        else:
            with open(keyfile, "w") as f:
                f.write(key)
            log(f"{cid}: reference done in {time.monotonic() - t:.1f} s")
    return True


def bench_case(args, case, files, durations, min_duration, rounds, ref_from=None, want_floor=False,
               want_psnr=True):
    """Reference render, then vmerge/ffmpeg alternately over rounds, floor, PSNR."""
    work = args.work
    cid = case["id"]
    os.makedirs(os.path.join(work, "out"), exist_ok=True)
    os.makedirs(os.path.join(work, "logs"), exist_ok=True)
    os.makedirs(os.path.join(work, "refs"), exist_ok=True)
    script = f"out/{cid}.graph"
    res = dict(case)
    res["inputs"] = len(files)
    res["input_seconds"] = round(sum(durations), 3)
    res["loadavg_start"] = os.getloadavg()

    # Reference (lossless) render, cached per command line.
    ref = f"refs/{cid}.mkv"
    if want_psnr:
        want_psnr = reference(args, cid, files, durations, ref_from)
        if want_psnr:
            res["ref_frames"] = video_frames(ref, work)

    tools = ["vmerge"] + [name for name, _ in args.variants] + ["ffmpeg"]
    outs = {tool: f"out/{cid}-{tool}.mp4" for tool in tools}
    cmds = {"vmerge": vmerge_cmd(args.vmerge, files, outs["vmerge"], min_duration),
            "ffmpeg": ffmpeg_merge_cmd(files, durations, outs["ffmpeg"], script, work)}
    for name, extra in args.variants:
        cmds[name] = vmerge_cmd(args.vmerge, files, outs[name], min_duration, extra)
    res["commands"] = {k: v if len(files) <= 6 else v[:8] + ["..."] for k, v in cmds.items()}
    example = files[:2]
    res["ffmpeg_graph_example"] = merge_graph(durations[:len(example)],
                                              hd=[is_hd(os.path.join(work, f)) for f in example])
    runs = {tool: [] for tool in tools}
    for r in range(rounds):
        for tool in tools:
            p = os.path.join(work, outs[tool])
            if os.path.exists(p):
                os.remove(p)
            log(f"{cid}: {tool} round {r + 1}/{rounds} ...")
            rec = measure(cmds[tool], work, os.path.join(work, f"logs/{cid}-{tool}-r{r + 1}.err"), args.timeout,
                          args.mem_limit_kib)
            if not rec.get("failed"):
                rec["size"] = os.path.getsize(p)
                log(f"{cid}: {tool} round {r + 1}: wall {rec['wall_s']:.2f} s, CPU {rec['cpu_s']:.2f} s, "
                    f"RSS {rec['rss_kib'] / 1024:.0f} MiB")
            else:
                log(f"{cid}: {tool} round {r + 1}: FAILED ({rec['error']})")
            runs[tool].append(rec)
    res["runs"] = runs

    if want_floor:
        res["floor_command"] = floor_cmd(files)
        fr = []
        for r in range(args.floor_rounds):
            log(f"{cid}: decode floor round {r + 1}/{args.floor_rounds} ...")
            rec = measure(floor_cmd(files), work, os.path.join(work, f"logs/{cid}-floor-r{r + 1}.err"), args.timeout,
                          args.mem_limit_kib)
            log(f"{cid}: floor round {r + 1}: " + (f"wall {rec['wall_s']:.2f} s, CPU {rec['cpu_s']:.2f} s"
                                                   if not rec.get("failed") else f"FAILED ({rec['error']})"))
            fr.append(rec)
        res["floor_runs"] = fr

    # PSNR of the last successful output of each tool against the reference.
    res["psnr"], res["frames"] = {}, {}
    for tool in tools:
        ok = runs[tool] and not runs[tool][-1].get("failed")
        if not ok:
            continue
        res["frames"][tool] = video_frames(outs[tool], work)
        if want_psnr:
            log(f"{cid}: PSNR {tool} vs reference ...")
            res["psnr"][tool] = psnr(outs[tool], ref, work, os.path.join(work, f"logs/{cid}-{tool}-psnr.err"))
            if res["frames"][tool] != res.get("ref_frames"):
                msg = (f"warning: {cid}: {tool} output has {res['frames'][tool]} frames, "
                       f"the reference {res.get('ref_frames')}")
                log(msg)
                res.setdefault("warnings", []).append(msg)
    # Once more under perf, after PSNR has read the timed rounds' outputs (these runs overwrite them).
    if args.stages:
        res["stages"] = {}
        for tool in tools + (["floor"] if want_floor else []):
            log(f"{cid}: {tool} under perf (stages) ...")
            argv = floor_cmd(files) if tool == "floor" else cmds[tool]
            res["stages"][tool] = stages.profile(argv, work, cores(), os.path.join(work, f"logs/{cid}-{tool}-perf.err"),
                                                 timeout=args.timeout)
    res["loadavg_end"] = os.getloadavg()
    return res


def safe_case(args, case, files, *rest, **kw):
    """bench_case, but a crash of the bench itself is recorded as a failed case, not fatal."""
    try:
        return bench_case(args, case, files, *rest, **kw)
    except Exception as e:  # noqa: BLE001 -- keep going with the other cases
        err = f"bench error: {type(e).__name__}: {e}"
        log(f"{case['id']}: {err}")
        fail = {"failed": True, "error": err}
        return dict(case, inputs=len(files), input_seconds=round(sum(rest[0]), 3), loadavg_start=os.getloadavg(),
                    loadavg_end=os.getloadavg(), runs={"vmerge": [fail], "ffmpeg": [fail]}, psnr={}, frames={},
                    warnings=[err])


# ---------------------------------------------------------------------------------------------
# Report


def fmt(v, spec):
    return "failed" if v is None else format(v, spec)


def summarize(res):
    s = {}
    for tool in res["runs"]:
        runs = res["runs"][tool]
        sizes = sorted({r["size"] for r in runs if "size" in r})
        rss = med(runs, "rss_kib")
        s[tool] = {"wall_s": med(runs, "wall_s"), "cpu_s": med(runs, "cpu_s"), "utilisation": utilisation(runs),
                   "rss_mib": rss / 1024 if rss is not None else None,
                   "size": sizes[-1] if sizes else None, "sizes_vary": len(sizes) > 1,
                   "psnr": res["psnr"].get(tool), "frames": res["frames"].get(tool),
                   "ok_runs": sum(1 for r in runs if not r.get("failed")), "runs": len(runs),
                   "error": next((r["error"] for r in runs if r.get("failed")), None)}
    if "floor_runs" in res:
        rss = med(res["floor_runs"], "rss_kib")
        s["floor"] = {"wall_s": med(res["floor_runs"], "wall_s"), "cpu_s": med(res["floor_runs"], "cpu_s"),
                      "rss_mib": rss / 1024 if rss is not None else None,
                      "error": next((r["error"] for r in res["floor_runs"] if r.get("failed")), None)}
    s["variant_ratios"] = {}
    for tool in (t for t in res["runs"] if t != "ffmpeg"):
        pairs = []
        for a, b in zip(res["runs"][tool], res["runs"]["ffmpeg"]):
            if a.get("failed") or b.get("failed"):
                pairs.append(None)
                continue
            pairs.append({"wall": a["wall_s"] / b["wall_s"], "cpu": a["cpu_s"] / b["cpu_s"],
                          "rss": a["rss_kib"] / b["rss_kib"]})
        good = [p for p in pairs if p]
        median = {k: statistics.median(p[k] for p in good) for k in ("wall", "cpu", "rss")} if good else None
        if tool == "vmerge":
            s["ratios"], s["ratio_median"] = pairs, median
        else:
            s["variant_ratios"][tool] = {"ratios": pairs, "ratio_median": median}
    res["summary"] = s
    return s


def cores():
    """The cores this process may use (its affinity), as a command run from it may."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def utilisation(runs):
    """CPU seconds over (wall seconds x cores), the median over the rounds: how busy the command
    kept the cores it could use (1.0: all of them, all the time)."""
    ok = [r["cpu_s"] / (r["wall_s"] * cores()) for r in runs if not r.get("failed") and r.get("wall_s")]
    return statistics.median(ok) if ok else None


def print_set(title, results, out):
    p = lambda *a: print(*a, file=out)
    p(f"\n## {title}\n")
    p(f"{'case':<6} {'command':<14} {'wall s':>8} {'CPU s':>8} {'util %':>7} {'RSS MiB':>8} {'size B':>10} "
      f"{'PSNR dB':>8} {'frames':>7}")
    p("-" * 84)
    for res in results:
        s = res["summary"]
        for tool in res["runs"]:
            t = s[tool]
            if t["ok_runs"] == 0:
                p(f"{res['id']:<6} {tool:<14} failed: {t['error']}")
                continue
            ps = t["psnr"]
            psnr_s = "-" if ps is None else ("inf" if math.isinf(ps) else f"{ps:.2f}")
            size_s = f"{t['size']}" + ("*" if t["sizes_vary"] else "")
            util = t["utilisation"]
            p(f"{res['id']:<6} {tool:<14} {fmt(t['wall_s'], '8.2f')} {fmt(t['cpu_s'], '8.2f')} "
              f"{fmt(None if util is None else 100 * util, '7.0f')} {fmt(t['rss_mib'], '8.0f')} {size_s:>10} {psnr_s:>8} {t['frames'] if t['frames'] is not None else '-':>7}"
              + (f"  ({t['ok_runs']}/{t['runs']} ok: {t['error']})" if t["ok_runs"] < t["runs"] else ""))
        if "floor" in s:
            f = s["floor"]
            if f["wall_s"] is None:
                p(f"{res['id']:<6} {'decode floor':<14} failed: {f['error']}")
            else:
                p(f"{res['id']:<6} {'decode floor':<14} {f['wall_s']:8.2f} {f['cpu_s']:8.2f} "
                  f"{100 * f['cpu_s'] / (f['wall_s'] * cores()):7.0f} {f['rss_mib']:8.0f}")
    p("")
    p("vmerge/ffmpeg ratios, pair by pair (wall, CPU, RSS), then the median of the ratios:")
    for res in results:
        s = res["summary"]
        cells = ["failed" if r is None else f"{r['wall']:.2f}/{r['cpu']:.2f}/{r['rss']:.2f}" for r in s["ratios"]]
        m = s["ratio_median"]
        mtxt = "n/a" if m is None else f"wall {m['wall']:.2f}  CPU {m['cpu']:.2f}  RSS {m['rss']:.2f}"
        p(f"  {res['id']:<6} pairs: {'  '.join(cells):<44} median: {mtxt}")
        for name, v in s.get("variant_ratios", {}).items():
            cells = ["failed" if r is None else f"{r['wall']:.2f}/{r['cpu']:.2f}/{r['rss']:.2f}" for r in v["ratios"]]
            m = v["ratio_median"]
            mtxt = "n/a" if m is None else f"wall {m['wall']:.2f}  CPU {m['cpu']:.2f}  RSS {m['rss']:.2f}"
            p(f"  {res['id']:<6} {name} / ffmpeg: {'  '.join(cells):<30} median: {mtxt}")
    for res in results:
        if res.get("stages"):
            stages.print_profiles(f"Set {res['id']}", list(res["stages"].items()), cores(), out)
    for res in results:
        for w in res.get("warnings", []):
            p("  " + w)
        la, lb = res["loadavg_start"], res["loadavg_end"]
        p(f"  {res['id']}: {res['inputs']} inputs, {res['input_seconds']:.1f} input-s, "
          f"load average {la[0]:.2f} -> {lb[0]:.2f}")


def jsonable(o):
    """Infinite PSNR (identical pictures) becomes the string "inf"; tuples become lists."""
    if isinstance(o, float) and math.isinf(o):
        return "inf"
    if isinstance(o, dict):
        return {k: jsonable(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [jsonable(v) for v in o]
    return o


def save(results, path):
    with open(path + ".part", "w") as f:
        json.dump(jsonable(results), f, indent=1)
    os.replace(path + ".part", path)


def fit(points):
    """Least squares y = a + b x; returns slope, intercept, R^2."""
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    sxy = sum((x - mx) * (y - my) for x, y in points)
    b = sxy / sxx
    a = my - b * mx
    ss_tot = sum((y - my) ** 2 for _, y in points)
    ss_res = sum((y - (a + b * x)) ** 2 for x, y in points)
    return b, a, (1 - ss_res / ss_tot) if ss_tot else 1.0


def b_summary(bres, out):
    p = lambda *a: print(*a, file=out)
    by_n = {r["n"]: r for r in bres}
    extra = {}
    p("\nvmerge scaling on set B:")
    if 2 in by_n and 200 in by_n:
        r2, r200 = by_n[2]["summary"]["vmerge"]["rss_mib"], by_n[200]["summary"]["vmerge"]["rss_mib"]
        if r2 and r200:
            extra["rss_ratio_200_over_2"] = r200 / r2
            p(f"  peak RSS N=200 / N=2: {r200:.1f} / {r2:.1f} MiB = {r200 / r2:.3f} "
              f"(target <= 1.1: {'met' if r200 / r2 <= 1.1 else 'NOT met'})")
    for tool, key, label in (("vmerge", "wall_fit", "  wall time vs input seconds over N=" + ",".join(str(r["n"]) for r in bres)),
                             ("ffmpeg", "ffmpeg_wall_fit", "  (ffmpeg, same fit over its successful N")):
        pts = [(r["input_seconds"], r["summary"][tool]["wall_s"]) for r in bres
               if r["summary"][tool]["wall_s"] is not None]
        if len(pts) < 2:
            break
        b, a, r2 = fit(pts)
        extra[key] = {"points": pts, "slope_ms_per_input_s": b * 1000, "intercept_s": a, "r2": r2}
        p(f"{label}: {b * 1000:.1f} ms per input-second, intercept {a:.2f} s, R^2 {r2:.4f}" + (")" if tool == "ffmpeg" else ""))
    return extra


# ---------------------------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description="Benchmark vmerge against the equivalent ffmpeg command.")
    ap.add_argument("--sets", default="A,P,H,B,S,D,O,R", help="comma-separated sets: A (6x 1080p H.264, 3 portrait), "
                    "P (phone-like: 6x 1080p H.264 12-40 Mb/s with B-frames and strong temporal noise, 3 portrait), "
                    "H (3x 1080p HEVC 10-bit), K (2x 4K60 HEVC 10-bit, not in the default), B (200x 1 s 640x480 at N=2,50,200,1000), S (1080p slow motion: "
                    "240, 120, 60 fps), D (slow motion with 30 non-droppable frames/s, as phones encode it), "
                    "O (set A from and to a local S3 server, against disk and ffmpeg on presigned URLs), "
                    "R (set A as 320x240 + 640x480 and 320x240 + 1080x1920, one decode, against ffmpeg per file "
                    "and ffmpeg with a split graph) (default: A,P,H,B,S,D,O,R)")
    ap.add_argument("--r-cases", default="R1,R2", help="set R's cases: R1 (320x240 + 640x480), R2 (320x240 + "
                    "1080x1920) (default: R1,R2)")
    ap.add_argument("--rounds", type=int, default=3, help="vmerge/ffmpeg pairs per case (default: 3)")
    ap.add_argument("--rounds-1000", type=int, default=1, help="pairs for set B at N=1000 (default: 1)")
    ap.add_argument("--b-sizes", default="2,50,200,1000", help="N values for set B (default: 2,50,200,1000)")
    ap.add_argument("--psnr-1000", action="store_true",
                    help="also compute PSNR for set B at N=1000 (off by default: ~1.5 min more)")
    ap.add_argument("--floor-rounds", type=int, default=1, help="decode-floor runs for sets A and H (default: 1)")
    ap.add_argument("--work", default=DEFAULT_WORK, help=f"work directory (default: {DEFAULT_WORK})")
    ap.add_argument("--vmerge", default=DEFAULT_VMERGE, help=f"vmerge binary (default: {DEFAULT_VMERGE})")
    ap.add_argument("--variant", action="append", default=[], metavar="NAME=ARGS",
                    help="also time vmerge with these extra arguments, as NAME, in every round (repeatable), "
                    "e.g. --variant 'deblock-all=--skip-deblocking always'")
    ap.add_argument("--stages", action="store_true",
                    help="after the rounds, run each command once more under perf: CPU by stage and thread, "
                    "and a timeline of how busy the cores are")
    ap.add_argument("--timeout", type=float, default=900, help="kill a command after this many seconds (default: 900)")
    ap.add_argument("--mem-limit-mib", type=float, default=None,
                    help="kill a command whose RSS passes this (default: 75%% of MemTotal, at most MemAvailable - 2 GiB)")
    args = ap.parse_args()

    args.work = os.path.abspath(args.work)
    args.vmerge = os.path.abspath(args.vmerge) if os.sep in args.vmerge else shutil.which(args.vmerge) or args.vmerge
    sets = [s.strip().upper() for s in args.sets.split(",") if s.strip()]
    if not sets or any(s not in ("A", "P", "H", "K", "B", "S", "D", "O", "R") for s in sets):
        ap.error("--sets takes A, P, H, K, B, S, D and/or O")
    if args.rounds < 1 or args.rounds_1000 < 1 or args.floor_rounds < 0:
        ap.error("rounds must be >= 1")
    b_sizes = [int(x) for x in args.b_sizes.split(",")]
    args.variants = []
    for v in args.variant:
        name, sep, extra = v.partition("=")
        if not sep or not re.fullmatch(r"[a-z0-9-]+", name) or name in ("vmerge", "ffmpeg", "floor", "decode"):
            ap.error(f"--variant takes NAME=ARGS with a new lower-case NAME, not {v!r}")
        args.variants.append((name, shlex.split(extra)))
    if args.stages and not stages.available():
        die("--stages needs perf (Debian: linux-perf) allowed to profile this user's processes")
    if not os.access(args.vmerge, os.X_OK):
        die(f"vmerge binary not found: {args.vmerge} (build with `swift build -c release "
            f"--scratch-path /tmp/vm-bench-build` or pass --vmerge)")
    for tool in ("ffmpeg", "ffprobe"):
        if not shutil.which(tool):
            die(f"{tool} not found in PATH")
    meminfo = {}
    with open("/proc/meminfo") as f:
        for line in f:
            k, v = line.split(":", 1)
            meminfo[k] = int(v.split()[0])
    mem_total_kib = meminfo.get("MemTotal", 0)
    args.mem_limit_kib = (int(args.mem_limit_mib * 1024) if args.mem_limit_mib else
                          int(min(mem_total_kib * 0.75, meminfo.get("MemAvailable", mem_total_kib) - 2 * 1024 * 1024)))
    os.makedirs(args.work, exist_ok=True)

    ffv = subprocess.run(["ffmpeg", "-version"], capture_output=True, text=True).stdout.splitlines()[0]
    vmv = subprocess.run([args.vmerge, "--version"], capture_output=True, text=True).stdout.strip()
    git = lambda *a: subprocess.run(["git", "-C", REPO, *a], capture_output=True, text=True).stdout.strip()
    env = {"git_head": git("rev-parse", "--short", "HEAD"),
           "git_dirty_sources": len(git("status", "--porcelain", "Sources", "Package.swift").splitlines()),
           "vmerge_mtime": datetime.datetime.fromtimestamp(os.path.getmtime(args.vmerge)).isoformat(timespec="seconds"),
           "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"), "host": platform.node(),
           "cpus": os.cpu_count(), "cores_allowed": cores(), "mem_total_mib": mem_total_kib // 1024, "kernel": platform.release(),
           "ffmpeg": ffv, "vmerge": args.vmerge, "vmerge_version": vmv,
           "open_files_limit": resource.getrlimit(resource.RLIMIT_NOFILE)[0],
           "loadavg_start": os.getloadavg(), "sets": sets, "rounds": args.rounds, "rounds_1000": args.rounds_1000,
           "floor_rounds": args.floor_rounds, "mem_limit_mib": args.mem_limit_kib // 1024}
    log(f"{ffv}; vmerge {args.vmerge}; {os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.2f}; "
        f"work {args.work}")

    results = {"env": env, "sets": {}}
    path = os.path.join(args.work, f"results-{datetime.datetime.now().strftime('%Y%m%d-%H%M%S')}.json")
    out = sys.stdout
    print(f"# vmerge benchmark, {env['date']}, {os.cpu_count()} CPUs, {ffv.split(' Copyright')[0]}", file=out)
    print("medians over the rounds; RSS = peak resident set of the one process; size = output bytes "
          "(* = varied between rounds); PSNR = luma+chroma average vs the lossless reference", file=out)

    for s in sets:
        t = time.monotonic()
        if s == "A":
            m = inputs_A(args.work)
            files = [c["file"] for c in m["clips"]]
            durs = [c["video"]["duration"] for c in m["clips"]]
            rots = [c["video"]["rotation"] for c in m["clips"]]
            log(f"A: rotations {rots}")
            res = [safe_case(args, {"id": "A", "set": "A", "n": len(files)}, files, durs, None, args.rounds,
                             want_floor=args.floor_rounds > 0)]
            summarize(res[0])
            print_set("Set A: 6 x 10 s 1920x1080 H.264 High 12 Mb/s 30 fps + AAC, 3 portrait (rotation -90)", res, out)
        elif s == "O":
            files, durs = set_A_files(args.work)
            res = objectstore.run(sys.modules[__name__], args, files, durs, args.rounds)
            objectstore.summary(res, out)
            results["sets"]["O"] = res
            save(results, path)
            continue
        elif s == "R":
            files, durs = set_A_files(args.work)
            res = renditions.run(sys.modules[__name__], args, files, durs, args.rounds)
            renditions.summary(res, out)
            results["sets"]["R"] = res
            save(results, path)
            continue
        elif s == "P":
            m = inputs_P(args.work)
            files = [c["file"] for c in m["clips"]]
            durs = [c["video"]["duration"] for c in m["clips"]]
            res = [safe_case(args, {"id": "P", "set": "P", "n": len(files)}, files, durs, None, args.rounds,
                             want_floor=args.floor_rounds > 0)]
            summarize(res[0])
            print_set("Set P (phone-like): 6 x 8-10 s 1920x1080 H.264 High 12-40 Mb/s, 3 B-frames, strong temporal "
                      "noise, 30 fps + AAC, 3 portrait (rotation -90)", res, out)
        elif s in ("H", "K"):
            m = inputs_H(args.work) if s == "H" else inputs_K(args.work)
            files = [c["file"] for c in m["clips"]]
            durs = [c["video"]["duration"] for c in m["clips"]]
            res = [safe_case(args, {"id": s, "set": s, "n": len(files)}, files, durs, None, args.rounds,
                             want_floor=args.floor_rounds > 0)]
            summarize(res[0])
            print_set("Set H: 3 x 5 s 1920x1080 HEVC Main 10 (hvc1) 30 fps + AAC" if s == "H" else
                      "Set K: 2 x 3 s 3840x2160 HEVC Main 10 (hvc1) 60 fps 40 Mb/s + AAC, 1 portrait", res, out)
        elif s in ("S", "D"):
            m = inputs_S(args.work) if s == "S" else inputs_D(args.work)
            files = [c["file"] for c in m["clips"]]
            durs = [c["video"]["duration"] for c in m["clips"]]
            res = [safe_case(args, {"id": s, "set": s, "n": len(files)}, files, durs, 0, args.rounds,
                             want_floor=args.floor_rounds > 0)]
            summarize(res[0])
            res[0]["decode"] = decode_shares(args, files, s)
            if s == "S":
                title = ("Set S: 1920x1080 slow motion: 2 s H.264 240 fps, 3 s HEVC 120 fps, 5 s H.264 60 fps, "
                         "5 s H.264 60 fps P-frames only; + AAC")
            else:
                title = ("Set D: 1920x1080 slow motion with 30 non-droppable frames/s (as phone encoders make it): "
                         "3 s H.264 240 fps, 3 s HEVC 120 fps, 5 s H.264 60 fps, 3 s H.264 120 fps variable rate; + AAC")
            print_set(title, res, out)
            print_decode_shares(res[0], s, out)
        else:
            m = inputs_B(args.work)
            base = [c["file"] for c in m["clips"]]
            bdur = [c["video"]["duration"] for c in m["clips"]]
            res = []
            for n in b_sizes:
                files = [base[i % len(base)] for i in range(n)]
                durs = [bdur[i % len(base)] for i in range(n)]
                ref_from = None
                if n > len(base) and n % len(base) == 0 and len(base) in b_sizes:
                    ref_from = (f"refs/B{len(base)}.mkv", n // len(base))
                r = safe_case(args, {"id": f"B{n}", "set": "B", "n": n}, files, durs, 0,
                              args.rounds_1000 if n >= 1000 else args.rounds, ref_from=ref_from,
                              want_psnr=n < 1000 or args.psnr_1000)
                summarize(r)
                res.append(r)
            print_set("Set B: 1 s 640x480 H.264 30 fps + AAC clips, N = " + ",".join(map(str, b_sizes))
                      + " (N > 200 repeats the 200); vmerge --min-duration 0", res, out)
            results["b_scaling"] = b_summary(res, out)
        results["sets"][s] = {"cases": res, "set_seconds": round(time.monotonic() - t, 1)}
        log(f"set {s} done in {time.monotonic() - t:.0f} s")
        out.flush()
        save(results, path)  # after every set, so an interrupted run keeps what it measured

    env["loadavg_end"] = os.getloadavg()
    env["total_seconds"] = round(time.monotonic() - T0, 1)
    save(results, path)
    print(f"\ntotal {env['total_seconds']:.0f} s; load average {env['loadavg_start'][0]:.2f} at start, "
          f"{env['loadavg_end'][0]:.2f} at end; results: {path}", file=out)
    log(f"done in {env['total_seconds']:.0f} s; results {path}")


if __name__ == "__main__":
    main()
