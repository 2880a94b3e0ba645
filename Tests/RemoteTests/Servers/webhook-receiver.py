"""A webhook receiver for vmerge's event tests: https on 127.0.0.1, checking every event's
Standard Webhooks signature with Python's own hmac (an implementation independent of vmerge's).

    python3 webhook-receiver.py CERT KEY SECRET LOG MODE

SECRET is the whsec_ secret; every POST is logged to LOG as one JSON line: its path, its
webhook-id and webhook-timestamp, whether its signature is valid, and its body (parsed). Before
answering it reads MODE (a JSON file, if there): {"status": 500, "times": 2} answers 500 to the
next two events (all of them without "times"), {"delay": 3} waits that long first, {"trickle": true}
answers 200 with a body that never ends (logged as it starts, with status "trickle"), {"status": 307, "location": URL} redirects, and
{"sequence": [mode, ...]} answers as each mode in turn says, each for its "times", and
{"paths": {"/slow": mode}} answers a POST to a path starting with /slow as that mode says (others
200). Prints
"ready https://127.0.0.1:PORT" once it listens.
"""

import base64
import hashlib
import hmac
import http.server
import json
import os
import ssl
import sys
import threading
import time

cert, key, secret, log_path, mode_path = sys.argv[1:6]
signing_key = base64.b64decode(secret[len("whsec_"):])
lock = threading.Lock()


def valid(headers, body):
    message_id = headers.get("webhook-id", "")
    timestamp = headers.get("webhook-timestamp", "")
    signed = f"{message_id}.{timestamp}.".encode() + body
    expected = base64.b64encode(hmac.new(signing_key, signed, hashlib.sha256).digest()).decode()
    offered = [part.split(",", 1)[1] for part in headers.get("webhook-signature", "").split() if part.startswith("v1,")]
    fresh = timestamp.isdigit() and abs(time.time() - int(timestamp)) < 300
    return fresh and any(hmac.compare_digest(expected, sig) for sig in offered)


def take_mode(path):
    """The answer asked for by MODE for a POST to `path`, one of its times spent."""
    with lock:
        try:
            with open(mode_path) as file:
                mode = json.load(file)
        except (OSError, ValueError):
            return {}
        if "paths" in mode:
            return next((m for prefix, m in mode["paths"].items() if path.startswith(prefix)), {})
        if "sequence" in mode:
            # The first mode with times left; each answer spends one of its times.
            current = next((m for m in mode["sequence"] if m.get("times", 0) > 0), None)
            if current is None:
                return {}
            current["times"] -= 1
            with open(mode_path, "w") as file:
                json.dump(mode, file)
            return current
        if "times" in mode:
            if mode["times"] <= 0:
                return {}
            mode["times"] -= 1
            with open(mode_path, "w") as file:
                json.dump(mode, file)
        return mode


def log(entry):
    with lock, open(log_path, "a") as file:
        file.write(json.dumps(entry) + "\n")


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        mode = take_mode(self.path)
        if mode.get("trickle"):
            # A 200 whose body never ends: two bytes a second, for as long as the client stays.
            # Logged as it starts (status "trickle"), so a test knows the client is mid-answer.
            log({"path": self.path, "id": self.headers.get("webhook-id"), "status": "trickle"})
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            try:
                while True:
                    self.wfile.write(b"2\r\nok\r\n")
                    self.wfile.flush()
                    time.sleep(1)
            except OSError:
                return
        time.sleep(mode.get("delay", 0))
        status = mode.get("status", 200)
        try:
            parsed = json.loads(body)
        except ValueError:
            parsed = None
        entry = {
            "path": self.path, "id": self.headers.get("webhook-id"),
            "timestamp": self.headers.get("webhook-timestamp"), "valid": valid(self.headers, body),
            "status": status, "body": parsed,
        }
        log(entry)
        self.send_response(status)
        if "location" in mode:
            self.send_header("Location", mode["location"])
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(cert, key)
server.socket = context.wrap_socket(server.socket, server_side=True)
print(f"ready https://127.0.0.1:{server.server_address[1]}", flush=True)
# Stops when its stdin closes (the test's ChildServer closes it to stop a server).
threading.Thread(target=lambda: (sys.stdin.read(), os._exit(0)), daemon=True).start()
server.serve_forever()
