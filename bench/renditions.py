"""Set R of `make bench`: several renditions from one decode (issue 49).

Set A (6 x 10 s 1920x1080, 3 portrait) made as two files at once, two ways each:
  R1  320x240 + 640x480     vmerge ... -o out.mp4 --rendition 4x3-480
  R2  320x240 + 1080x1920   vmerge ... -o out.mp4 --rendition 9x16-1080
against
  ffmpeg x2      the ffmpeg command run once per file (each decodes everything)
  ffmpeg split   one ffmpeg command whose graph splits each decoded clip into both files
  vmerge x2      vmerge asked for each file alone
interleaved round by round. Figures: each way's median wall, the ratios vmerge / ffmpeg x2 (goal
for R1: 0.65 at most) and vmerge / ffmpeg split (goal: 1.0 at most); whether each rendition's video
stream is byte for byte the one vmerge makes of it alone (then its PSNR is the same, not merely
within 0.1 dB); and the PSNR of the job's own 320x240 against set A's lossless reference, with the
rendition and alone: beside a 640x480 of the same window it is scaled from the 640x480's frames
(DerivedPictures), and with a larger rendition its clips are decoded with the deblocking filter the
alone run skips, so it differs (the goal: by 0.1 dB at most).
"""

import hashlib
import os
import subprocess
import sys

CASES = [
    # id, the rendition, its size, its aspect (w, h), vmerge's options for it alone
    ("R1", "4x3-480", (640, 480), (4, 3), ["--width", "640"]),
    ("R2", "9x16-1080", (1080, 1920), (9, 16), ["--width", "1080", "--aspect", "9:16"]),
]


def chain(bench, hd, size, aspect):
    """vmerge's picture path for one clip as an ffmpeg chain: the upright picture's centred window
    of `aspect` (exact: an odd offset is not rounded), scaled to `size`, on the 30 fps grid."""
    (w, h), (aw, ah) = size, aspect
    crop = f"crop=w='min(iw,ih*{aw}/{ah})':h='min(ih,iw*{ah}/{aw})':exact=1"
    colour = "" if hd else ":out_color_matrix=bt709"
    return f"{crop},scale={w}:{h}:flags=bicubic{colour}:out_range=tv,setsar=1,fps=30,format=yuv420p"


def graph(bench, files, durations, work, shapes):
    """One graph making each of `shapes` ((size, aspect), ...) from one decode of every clip
    (split), the sound once (asplit); outputs [v0], [v1]..., [a0], [a1]..."""
    n, k = len(files), len(shapes)
    parts = []
    for i, (f, dur) in enumerate(zip(files, durations)):
        hd = bench.is_hd(os.path.join(work, f))
        heads = "".join(f"[s{j}_{i}]" for j in range(k))
        parts.append(f"[{i}:v]split={k}{heads}" if k > 1 else f"[{i}:v]null[s0_{i}]")
        for j, (size, aspect) in enumerate(shapes):
            parts.append(f"[s{j}_{i}]{chain(bench, hd, size, aspect)}[v{j}_{i}]")
        parts.append(f"[{i}:a]{bench.ACHAIN},apad,atrim=end={dur:.6f}[a_{i}]")
    parts.append("".join(f"[v0_{i}][a_{i}]" for i in range(n)) + f"concat=n={n}:v=1:a=1[v0][acat]")
    for j in range(1, k):
        parts.append("".join(f"[v{j}_{i}]" for i in range(n)) + f"concat=n={n}:v=1:a=0[v{j}]")
    parts.append(f"[acat]asplit={k}" + "".join(f"[a{j}]" for j in range(k)) if k > 1 else "[acat]anull[a0]")
    return ";".join(parts)


def ffmpeg_cmd(bench, files, durations, work, shapes, outs, script):
    ins = [a for f in files for a in ("-i", f)]
    cmd = bench.FF + ins + bench.graph_args(graph(bench, files, durations, work, shapes), script, work)
    for j, out in enumerate(outs):
        cmd += ["-map", f"[v{j}]", "-map", f"[a{j}]"] + bench.X264 + bench.BT709 + bench.AAC + [
            "-movflags", "+faststart", out]
    return cmd


def video_md5(path, cwd):
    r = subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-i", path, "-map", "0:v", "-c", "copy", "-f", "md5", "-"],
                       cwd=cwd, capture_output=True, text=True)
    return r.stdout.strip() if r.returncode == 0 else None


def run(bench, args, files, durations, rounds):
    work = args.work
    wanted = set((getattr(args, "r_cases", None) or "R1,R2").split(","))
    for sub in ("out", "logs"):
        os.makedirs(os.path.join(work, sub), exist_ok=True)
    own = ((320, 240), (4, 3))
    results = []
    for cid, rendition, size, aspect, alone in CASES:
        if cid not in wanted:
            continue
        outs = {"vmerge": [f"out/{cid}-vmerge.mp4", f"out/{cid}-vmerge-{rendition}.mp4"],
                "ffmpeg_each": [f"out/{cid}-ffmpeg-320.mp4", f"out/{cid}-ffmpeg-{rendition}.mp4"],
                "ffmpeg_split": [f"out/{cid}-split-320.mp4", f"out/{cid}-split-{rendition}.mp4"],
                "vmerge_each": [f"out/{cid}-alone-320.mp4", f"out/{cid}-alone-{rendition}.mp4"]}
        commands = {
            "vmerge": [[args.vmerge, "-q", "-y", *files, "-o", outs["vmerge"][0], "--rendition", rendition]],
            "ffmpeg_each": [ffmpeg_cmd(bench, files, durations, work, [shape], [out], f"out/{cid}-each{j}.graph")
                            for j, (shape, out) in enumerate(zip([own, (size, aspect)], outs["ffmpeg_each"]))],
            "ffmpeg_split": [ffmpeg_cmd(bench, files, durations, work, [own, (size, aspect)], outs["ffmpeg_split"],
                                        f"out/{cid}-split.graph")],
            "vmerge_each": [[args.vmerge, "-q", "-y", *files, "-o", outs["vmerge_each"][0]],
                            [args.vmerge, "-q", "-y", *alone, *files, "-o", outs["vmerge_each"][1]]],
        }
        runs = {way: [] for way in commands}
        for r in range(rounds):
            for way, cmds in commands.items():
                wall = cpu = rss = 0.0
                failed = None
                for k, cmd in enumerate(cmds):
                    bench.log(f"{cid}: {way} ({k + 1}/{len(cmds)}) round {r + 1}/{rounds} ...")
                    rec = bench.measure(cmd, work, os.path.join(work, f"logs/{cid}-{way}-{k}-r{r + 1}.err"),
                                        args.timeout, args.mem_limit_kib)
                    if rec.get("failed"):
                        failed = rec["error"]
                        break
                    wall, cpu, rss = wall + rec["wall_s"], cpu + rec["cpu_s"], max(rss, rec["rss_kib"])
                rec = {"failed": True, "error": failed} if failed else {"wall_s": wall, "cpu_s": cpu, "rss_kib": rss}
                if not failed:
                    bench.log(f"{cid}: {way} round {r + 1}: wall {wall:.2f} s, CPU {cpu:.2f} s")
                runs[way].append(rec)
        result = {"id": cid, "rendition": rendition, "runs": runs,
                  "median_wall_s": {way: bench.med(rs, "wall_s") for way, rs in runs.items()},
                  "median_cpu_s": {way: bench.med(rs, "cpu_s") for way, rs in runs.items()},
                  "sizes": {way: [os.path.getsize(os.path.join(work, o)) if os.path.exists(os.path.join(work, o))
                                  else None for o in out] for way, out in outs.items()}}
        result["rendition_identical_to_alone"] = (
            video_md5(outs["vmerge"][1], work) is not None
            and video_md5(outs["vmerge"][1], work) == video_md5(outs["vmerge_each"][1], work))
        # Set A's lossless reference, as set A's own case makes it (made again when stale).
        if bench.reference(args, "A", files, durations):
            result["psnr_own"] = {
                way: bench.psnr(outs[way][0], "refs/A.mkv", work, os.path.join(work, f"logs/{cid}-{way}-psnr.err"))
                for way in ("vmerge", "vmerge_each")}
        med = result["median_wall_s"]
        if med["vmerge"]:
            result["vmerge_over_ffmpeg_each"] = med["vmerge"] / med["ffmpeg_each"] if med["ffmpeg_each"] else None
            result["vmerge_over_ffmpeg_split"] = med["vmerge"] / med["ffmpeg_split"] if med["ffmpeg_split"] else None
            result["vmerge_over_vmerge_each"] = med["vmerge"] / med["vmerge_each"] if med["vmerge_each"] else None
        results.append(result)
    return results


def summary(results, out=sys.stdout):
    print("\nSet R: set A as two files at once (median wall, CPU)", file=out)
    for r in results:
        med, cpu = r["median_wall_s"], r["median_cpu_s"]
        f = lambda v: "failed" if v is None else f"{v:8.2f}"  # noqa: E731
        print(f"  {r['id']}: 320x240 + {r['rendition']}", file=out)
        print(f"    vmerge, one command          {f(med['vmerge'])} s  CPU {f(cpu['vmerge'])} s", file=out)
        print(f"    vmerge, once per file        {f(med['vmerge_each'])} s  CPU {f(cpu['vmerge_each'])} s", file=out)
        print(f"    ffmpeg, once per file        {f(med['ffmpeg_each'])} s  CPU {f(cpu['ffmpeg_each'])} s", file=out)
        print(f"    ffmpeg, one command (split)  {f(med['ffmpeg_split'])} s  CPU {f(cpu['ffmpeg_split'])} s", file=out)
        ratio = lambda v: "n/a" if v is None else f"{v:.2f}x"  # noqa: E731
        goal = " (goal <= 0.65x)" if r["id"] == "R1" else ""
        print(f"    vmerge / ffmpeg once per file {ratio(r.get('vmerge_over_ffmpeg_each'))}{goal}; "
              f"vmerge / ffmpeg split {ratio(r.get('vmerge_over_ffmpeg_split'))} (goal <= 1.0x); "
              f"vmerge / vmerge once per file {ratio(r.get('vmerge_over_vmerge_each'))}", file=out)
        print(f"    {r['rendition']} video stream identical to vmerge's alone: "
              f"{'yes' if r['rendition_identical_to_alone'] else 'NO'}", file=out)
        if "psnr_own" in r:
            p = r["psnr_own"]
            print(f"    320x240 PSNR vs set A's lossless reference: with the rendition {p['vmerge']}, alone "
                  f"{p['vmerge_each']}", file=out)
