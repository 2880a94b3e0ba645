"""A private S3 server for vmerge's remote tests: moto, with its IAM checks on.

Run by Tests/RemoteTests/S3TestServer.swift with the virtualenv's python (scripts/install-deps.sh
makes it). Every request to S3 must carry a SigV4 signature moto recomputes with the secret of a
user made here: a wrong secret is SignatureDoesNotMatch, an unknown key InvalidAccessKeyId, the
second user's key AccessDenied (its policy allows nothing).

Beside S3, under /_vmerge/ (never signed, never logged, never faulted), the tests' own controls:
  POST   /_vmerge/faults            JSON list of faults to add (below)
  DELETE /_vmerge/faults            clears them
  GET    /_vmerge/requests          JSON list of the S3 requests seen, oldest first: method, path
                                    (as sent, escaped), query, range (the Range header or null),
                                    status, bytesSent (of the body), fault (what was injected)
  DELETE /_vmerge/requests          clears that log
  PUT    /_vmerge/buckets/B         makes bucket B
  GET    /_vmerge/buckets/B         JSON list of B's keys
  PUT    /_vmerge/objects/B/K       stores the body as object K of B
  GET    /_vmerge/objects/B/K       the object's bytes (404 if none)
They go straight to moto's backends, so they need no client and count as no request of the tests.

A fault: {"method": "GET", "key": "part", "query": "partNumber=", "times": 1, then either
"status": 503 (an S3 XML error: 503 SlowDown with Retry-After: 1, 500 InternalError, any other
status an error of "code", default InternalError) or "cutAfter": N (the real answer, its headers
promising the whole body, the connection closed after N bytes of it)}. method, key (a substring
of the path, /bucket/key) and query (a substring of the query string) are optional; times is 1
unless given. The first fault that matches a request applies, and is spent after `times`.

Prints `ready http://127.0.0.1:PORT` once it accepts connections; exits when its stdin closes (the
test process is gone, however it ended) or on SIGTERM.
"""

import argparse
import json
import os
import signal
import socket
import sys
import threading
from urllib.parse import unquote

from moto import settings
from moto.core.models import DEFAULT_ACCOUNT_ID
from moto.iam.models import iam_backends
from moto.moto_server.threaded_moto_server import MotoRequestHandler
from moto.s3.models import s3_backends
from moto.server import DomainDispatcherApplication, create_backend_app
from werkzeug.serving import make_server

REGION = "us-east-1"
CONTROL = "/_vmerge/"
ALLOW_ALL = {
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Action": ["s3:*", "sts:*"], "Resource": "*"}],
}


def make_user(name, access_key, secret_key, policy):
    """An IAM user with exactly this key pair; moto makes random ones, so the key is set after."""
    iam = iam_backends[DEFAULT_ACCOUNT_ID]["aws"]
    iam.create_user(REGION, name)
    key = iam.create_access_key(name)
    key.access_key_id = access_key
    key.secret_access_key = secret_key
    if policy is not None:
        iam.put_user_policy(name, "vmerge-tests", json.dumps(policy))


def s3():
    return s3_backends[DEFAULT_ACCOUNT_ID]["aws"]


def s3_error(status, code, message, retry_after=None):
    body = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f"<Error><Code>{code}</Code><Message>{message}</Message>"
        "<RequestId>vmerge-fault</RequestId></Error>"
    ).encode()
    headers = [("Content-Type", "application/xml"), ("Content-Length", str(len(body)))]
    if retry_after is not None:
        headers.append(("Retry-After", str(retry_after)))
    return status, headers, body


STATUS_TEXT = {200: "OK", 204: "No Content", 400: "Bad Request", 403: "Forbidden", 404: "Not Found"}
# S3's own answers to these statuses (code, message, Retry-After), as a client meets them.
DEFAULT_ERRORS = {
    503: ("SlowDown", "Please reduce your request rate.", 1),
    500: ("InternalError", "We encountered an internal error. Please try again.", None),
}


class Harness:
    """The WSGI middleware in front of moto: faults, the request log, the controls."""

    def __init__(self, app):
        self.app = app
        self.lock = threading.Lock()
        self.faults = []
        self.log = []

    def __call__(self, environ, start_response):
        path = environ.get("PATH_INFO", "")
        if path.startswith(CONTROL):
            # The raw path, unquoted once below: PATH_INFO is decoded as Latin-1 (WSGI), which
            # would turn a UTF-8 key into another one.
            raw = environ.get("RAW_URI", environ.get("REQUEST_URI", path)).split("?", 1)[0]
            status, headers, body = self.control(environ, raw[len(CONTROL) :])
            start_response(f"{status} {STATUS_TEXT.get(status, 'Status')}", headers)
            return [body]
        entry = {
            "method": environ["REQUEST_METHOD"],
            # As the client sent it (escaped), so a test sees how its client wrote a key.
            "path": environ.get("RAW_URI", path).split("?", 1)[0],
            "query": environ.get("QUERY_STRING", ""),
            "range": environ.get("HTTP_RANGE"),
            "status": 0,
            "bytesSent": 0,
            "fault": None,
        }
        with self.lock:
            self.log.append(entry)
            fault = self.take_fault(entry)
        if fault is not None:
            entry["fault"] = fault.get("status") or f"cutAfter {fault['cutAfter']}"
        if fault is not None and "status" in fault:
            return self.answer_error(fault, entry, start_response)
        if not self.signed(environ):
            # moto reads the Authorization header without asking whether there is one (a 500):
            # an anonymous request is refused as S3 refuses it.
            fault = {"status": 403, "code": "AccessDenied", "message": "Anonymous access is not allowed"}
            return self.answer_error(fault, entry, start_response)

        def logging_start_response(status, headers, exc_info=None):
            entry["status"] = int(status.split(" ", 1)[0])
            return start_response(status, headers, exc_info)

        body = self.app(environ, logging_start_response)
        limit = fault["cutAfter"] if fault is not None else None
        return self.counted(body, entry, limit, environ.get("werkzeug.socket"))

    @staticmethod
    def signed(environ):
        return "HTTP_AUTHORIZATION" in environ or "X-Amz-Credential" in environ.get("QUERY_STRING", "")

    def take_fault(self, entry):
        """The first fault matching the request, one of its times spent (under the lock)."""
        for fault in self.faults:
            if fault.get("method", entry["method"]).upper() != entry["method"]:
                continue
            if fault.get("key", "") not in unquote(entry["path"]):
                continue
            if fault.get("query", "") not in entry["query"]:
                continue
            fault["times"] = fault.get("times", 1) - 1
            if fault["times"] <= 0:
                self.faults.remove(fault)
            return dict(fault)
        return None

    @staticmethod
    def answer_error(fault, entry, start_response):
        status = int(fault["status"])
        code, message, retry_after = DEFAULT_ERRORS.get(status, ("InternalError", "Injected fault.", None))
        code = fault.get("code", code)
        message = fault.get("message", message)
        _, headers, body = s3_error(status, code, message, fault.get("retryAfter", retry_after))
        entry["status"] = status
        entry["bytesSent"] = len(body)
        start_response(f"{status} {code}", headers)
        return [body]

    @staticmethod
    def counted(body, entry, limit, connection):
        """moto's body, counted into the log as it goes out (before each piece is written, so a
        client that has the bytes finds them logged); cut after `limit` bytes if given."""
        try:
            for piece in body:
                if limit is not None and entry["bytesSent"] + len(piece) >= limit:
                    piece = piece[: max(0, limit - entry["bytesSent"])]
                    entry["bytesSent"] += len(piece)
                    yield piece
                    # Shut down, not just closed: the server's own reference to the socket would
                    # otherwise keep the connection open.
                    if connection is not None:
                        connection.shutdown(socket.SHUT_RDWR)
                    return
                entry["bytesSent"] += len(piece)
                yield piece
        finally:
            if hasattr(body, "close"):
                body.close()

    def control(self, environ, command):
        method = environ["REQUEST_METHOD"]
        length = int(environ.get("CONTENT_LENGTH") or 0)
        data = environ["wsgi.input"].read(length) if length else b""

        def as_json(value):
            return 200, [("Content-Type", "application/json")], json.dumps(value).encode()

        with self.lock:
            if command == "faults" and method == "POST":
                self.faults.extend(json.loads(data))
                return as_json(self.faults)
            if command == "faults" and method == "DELETE":
                self.faults.clear()
                return as_json([])
            if command == "requests":
                if method == "DELETE":
                    self.log.clear()
                return as_json(list(self.log))
        try:
            return self.storage(method, command, data, as_json)
        except Exception as error:  # moto's own (a bad bucket name, none such): the test reads why
            return 400, [("Content-Type", "text/plain")], f"{type(error).__name__}: {error}\n".encode()

    @staticmethod
    def storage(method, command, data, as_json):
        kind, _, rest = command.partition("/")
        bucket, _, key = unquote(rest).partition("/")
        if kind == "buckets" and method == "PUT":
            s3().create_bucket(bucket, REGION)
            return as_json({"bucket": bucket})
        if kind == "buckets" and method == "GET":
            found = s3().get_bucket(bucket)
            keys, *_ = s3().list_objects(found, prefix=None, delimiter=None, marker=None, max_keys=None)
            return as_json(sorted(item.name for item in keys))
        if kind == "objects" and method == "PUT":
            s3().put_object(bucket, key, data)
            return as_json({"bytes": len(data)})
        if kind == "objects" and method == "GET":
            found = s3().get_object(bucket, key)
            if found is None:
                return 404, [("Content-Type", "text/plain")], b"no such object\n"
            return 200, [("Content-Type", "application/octet-stream")], bytes(found.value)
        return 404, [("Content-Type", "text/plain")], b"unknown control\n"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--access-key", required=True)
    parser.add_argument("--secret-key", required=True)
    parser.add_argument("--denied-access-key", required=True)
    parser.add_argument("--denied-secret-key", required=True)
    options = parser.parse_args()
    make_user("vmerge-tests", options.access_key, options.secret_key, ALLOW_ALL)
    make_user("vmerge-denied", options.denied_access_key, options.denied_secret_key, None)
    # From the first request on, every one is checked: the users above were made without one.
    settings.INITIAL_NO_AUTH_ACTION_COUNT = 0
    app = Harness(DomainDispatcherApplication(create_backend_app))
    server = make_server("127.0.0.1", options.port, app, threaded=True, request_handler=MotoRequestHandler)
    # The test's end, whichever way it ends, closes our stdin: no server outlives its test run.
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    threading.Thread(target=lambda: (sys.stdin.buffer.read(), os._exit(0)), daemon=True).start()
    print(f"ready http://127.0.0.1:{server.server_port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
