"""Set O of `make bench`: set A read from and written to object storage.

Set A's clips are uploaded to a private S3 server on loopback: moto, with signatures checked, the
tests' own server (Tests/RemoteTests/Servers/s3server.py, in the virtualenv `make test` makes). The
same merge then runs three ways, interleaved round by round:
  disk      vmerge a0.mov ... -o out.mp4                     (set A as bench.py runs it)
  s3        vmerge s3://bench/A/ -o s3://bench/out.mp4 -y    (read by ranges, written by upload)
  ffmpeg    the bench's ffmpeg command reading presigned URLs of the same objects
and the figures are their walls, the ratio s3 / disk (goal: 1.10 at most), and the bytes vmerge
fetched over the bytes stored (from the server's own request log; goal: 1.05 at most).

moto serves at a few hundred MB/s from memory on loopback, so the ratio shows what vmerge's reading
and uploading cost, not a network's.
"""

import json
import os
import secrets
import subprocess
import sys
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "Tests", "RemoteTests", "Servers", "s3server.py")


def cache_folder():
    if os.environ.get("VMERGE_CACHE"):
        return os.environ["VMERGE_CACHE"]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "vmerge")


def python():
    return os.environ.get("VMERGE_S3_SERVER_PYTHON") or os.path.join(cache_folder(), "s3server", "bin", "python3")


class Server:
    """The S3 server as a child process; stopped by closing its stdin."""

    def __init__(self, log_path):
        self.key = "AKIAVMERGEBENCH00001"
        self.secret = secrets.token_urlsafe(30)
        self.log = open(log_path, "wb")
        self.proc = subprocess.Popen(
            [python(), SCRIPT, "--access-key", self.key, "--secret-key", self.secret,
             "--denied-access-key", "AKIAVMERGEBENCH00002", "--denied-secret-key", secrets.token_urlsafe(30)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log)
        line = self.proc.stdout.readline().decode().strip()
        if not line.startswith("ready "):
            raise RuntimeError(f"the S3 server did not start: {line!r} (see {log_path})")
        self.endpoint = line[len("ready "):]

    def control(self, method, path, body=None):
        request = urllib.request.Request(self.endpoint + "/_vmerge/" + path, data=body, method=method)
        with urllib.request.urlopen(request, timeout=120) as answer:
            return answer.read()

    def requests(self):
        return json.loads(self.control("GET", "requests"))

    def environment(self):
        return {"AWS_ACCESS_KEY_ID": self.key, "AWS_SECRET_ACCESS_KEY": self.secret, "AWS_ENDPOINT_URL": self.endpoint,
                "AWS_REGION": "us-east-1", "AWS_EC2_METADATA_DISABLED": "true", "AWS_PROFILE": ""}

    def presigned(self, bucket, key):
        code = ("import boto3,sys; from botocore.config import Config; c=boto3.client('s3', endpoint_url=sys.argv[1], "
                "region_name='us-east-1', aws_access_key_id=sys.argv[2], aws_secret_access_key=sys.argv[3], "
                "config=Config(signature_version='s3v4')); "
                "print(c.generate_presigned_url('get_object', Params={'Bucket': sys.argv[4], 'Key': sys.argv[5]}, "
                "ExpiresIn=86400))")
        out = subprocess.run([python(), "-c", code, self.endpoint, self.key, self.secret, bucket, key],
                             capture_output=True, text=True, check=True)
        return out.stdout.strip()

    def stop(self):
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=10)
        except Exception:
            self.proc.kill()
        self.log.close()


def run(bench, args, files, durations, rounds):
    """Set O's record: each way's runs, medians, and the ratios."""
    work = args.work
    if not os.access(python(), os.X_OK):
        return {"skipped": f"no S3 server virtualenv at {python()} (make test makes it)"}
    server = Server(os.path.join(work, "O-server.log"))
    saved = {k: os.environ.get(k) for k in server.environment()}
    try:
        server.control("PUT", "buckets/bench")
        stored = 0
        for f in files:
            with open(os.path.join(work, f), "rb") as clip:
                body = clip.read()
            stored += len(body)
            server.control("PUT", "objects/bench/" + f, body)
        # Presigned before the environment is set for vmerge (boto3 reads AWS_PROFILE="" as a
        # profile named "").
        urls = [server.presigned("bench", f) for f in files]
        os.environ.update(server.environment())
        prefix = "s3://bench/" + os.path.dirname(files[0]) + "/"
        ff = bench.ffmpeg_merge_cmd(files, durations, "O-ffmpeg.mp4", "O-graph.txt", work)
        for f, url in zip(files, urls):
            ff[ff.index(f)] = url
        ways = {
            "disk": bench.vmerge_cmd(args.vmerge, files, "O-disk.mp4", None),
            "s3": [args.vmerge, "-q", "-y", prefix, "-o", "s3://bench/O-out.mp4"],
            "ffmpeg_presigned": ff,
        }
        runs = {name: [] for name in ways}
        fetched = []
        for r in range(rounds):
            for name, argv in ways.items():
                server.control("DELETE", "requests")
                bench.log(f"O round {r + 1}/{rounds}: {name}")
                rec = bench.measure(argv, work, os.path.join(work, f"O-{name}.err"), 1800, args.mem_limit_kib)
                if name == "s3":
                    gets = [q for q in server.requests() if q["method"] == "GET" and "list-type" not in q["query"]]
                    rec["bytes_fetched"] = sum(q["bytesSent"] for q in gets)
                    rec["requests"] = len(gets)
                    fetched.append(rec["bytes_fetched"])
                runs[name].append(rec)
        med = {name: bench.med(rs, "wall_s") for name, rs in runs.items()}
        result = {"n": len(files), "bytes_stored": stored, "runs": runs, "median_wall_s": med,
                  "s3_over_disk": round(med["s3"] / med["disk"], 3) if med["s3"] and med["disk"] else None,
                  "ffmpeg_presigned_over_s3": round(med["ffmpeg_presigned"] / med["s3"], 3)
                  if med["ffmpeg_presigned"] and med["s3"] else None,
                  "fetched_over_stored": round(max(fetched) / stored, 4) if fetched else None}
        return result
    finally:
        server.stop()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def summary(result, out=sys.stdout):
    if "skipped" in result:
        print(f"\nSet O (object storage): skipped: {result['skipped']}", file=out)
        return
    med = result["median_wall_s"]
    print(f"\nSet O: set A ({result['n']} clips, {result['bytes_stored'] / 1e6:.1f} MB) on a local S3 server "
          f"(moto, signatures checked), median wall of {len(result['runs']['s3'])} rounds", file=out)
    print(f"  disk to disk                 {med['disk']:8.2f} s", file=out)
    print(f"  s3:// to s3:// (vmerge)      {med['s3']:8.2f} s   ratio s3/disk {result['s3_over_disk']:.2f}x (goal <= 1.10x)",
          file=out)
    print(f"  ffmpeg, presigned URLs       {med['ffmpeg_presigned']:8.2f} s   ratio ffmpeg/vmerge-s3 "
          f"{result['ffmpeg_presigned_over_s3']:.2f}x", file=out)
    print(f"  bytes fetched / stored       {result['fetched_over_stored']:.4f} (goal <= 1.05)", file=out)
