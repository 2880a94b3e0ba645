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
  DELETE /_vmerge/objects/B/K       removes object K of B (as someone else would)
  PUT    /_vmerge/imds              JSON {"role", "AccessKeyId", "SecretAccessKey", "Token",
                                    "Expiration"}: the instance role the fake metadata serves;
                                    without AccessKeyId, temporary keys of ROLE_ARN (answered)
  DELETE /_vmerge/imds              no role (the role listing is a 404)
They go straight to moto's backends, so they need no client and count as no request of the tests.

A fault: {"method": "GET", "key": "part", "query": "partNumber=", "times": 1, then either
"status": 503 (an S3 XML error: 503 SlowDown with Retry-After: 1, 500 InternalError, any other
status an error of "code", default InternalError; in STS's shape if "sts": true), "cutRequestAfter": N
(the connection shut after N bytes of the request's body, no answer: an upload cut) or "cutAfter": N
(the real answer, its headers promising the whole body, the connection closed after N bytes of
it) or "dropAnswer": true (the request done, then the connection shut with no answer)}. method, key (a substring of the path, /bucket/key) and query (a substring of the query
string) are optional; times is 1 unless given. The first fault that matches a request applies, and is spent after `times`.

STS: moto serves it at the same root (POST /, Action=...). AssumeRoleWithWebIdentity is unsigned,
as at AWS (the web identity token is the proof), and may assume ROLE_ARN, a role allowed s3:*.

A fake EC2 metadata service (IMDSv2) under /latest/, logged like S3 requests:
  PUT /latest/api/token (needs X-aws-ec2-metadata-token-ttl-seconds) gives a session token;
  GET /latest/meta-data/iam/security-credentials/ (needs X-aws-ec2-metadata-token: that token,
  else 401) the role's name, and .../security-credentials/ROLE its keys as JSON (404 until
  PUT /_vmerge/imds names them).

Prints `ready http://127.0.0.1:PORT` once it accepts connections; exits when its stdin closes (the
test process is gone, however it ended) or on SIGTERM.
"""

import argparse
import datetime
import hmac
import io
import json
import os
import signal
import socket
import sys
import threading
import uuid
from urllib.parse import parse_qs, parse_qsl, quote, unquote, urlencode

from moto import settings
from moto.core.models import DEFAULT_ACCOUNT_ID
from moto.iam.models import iam_backends
from moto.moto_server.threaded_moto_server import MotoRequestHandler
from moto.s3.models import s3_backends
from moto.server import DomainDispatcherApplication, create_backend_app
from moto.sts.models import sts_backends
from moto.sts.responses import TokenResponse
from werkzeug.serving import make_server

REGION = "us-east-1"
CONTROL = "/_vmerge/"
ROLE_NAME = "vmerge-test-role"
ROLE_ARN = f"arn:aws:iam::{DEFAULT_ACCOUNT_ID}:role/{ROLE_NAME}"
IMDS = "/latest/"
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


def make_role():
    """ROLE_ARN: trusts web identities (moto checks no token), may do anything in S3."""
    trust = {
        "Version": "2012-10-17",
        "Statement": [
            {"Effect": "Allow", "Principal": {"Federated": "vmerge-tests"}, "Action": "sts:AssumeRoleWithWebIdentity"}
        ],
    }
    iam = iam_backends[DEFAULT_ACCOUNT_ID]["aws"]
    iam.create_role(ROLE_NAME, json.dumps(trust), "/", None, "vmerge tests", [], None)
    iam.put_role_policy(ROLE_NAME, "vmerge-tests", json.dumps(ALLOW_ALL))


def unsigned_sts_as_at_aws():
    """moto's IAM checks want every STS call signed; AWS takes AssumeRoleWithWebIdentity unsigned."""
    original = TokenResponse._authenticate_and_authorize_normal_action

    def authenticate(self, resource="*"):
        if self._get_action() == "AssumeRoleWithWebIdentity" and "Authorization" not in self.headers:
            return None
        return original(self, resource)

    TokenResponse._authenticate_and_authorize_normal_action = authenticate


def instance_role(role):
    """The role the fake metadata serves: its keys as given, else temporary keys of ROLE_ARN minted
    by moto's STS (as an instance role's are: moto refuses a user's key with a session token)."""
    if "AccessKeyId" not in role:
        sts = sts_backends[DEFAULT_ACCOUNT_ID]["aws"]
        keys = sts.assume_role(REGION, "i-0vmerge", ROLE_ARN, None, 3600, None)
        role["AccessKeyId"] = keys.access_key_id
        role["SecretAccessKey"] = keys.secret_access_key
        role["Token"] = keys.session_token
        role["Expiration"] = keys.expiration.strftime("%Y-%m-%dT%H:%M:%SZ")
    return role


def s3():
    return s3_backends[DEFAULT_ACCOUNT_ID]["aws"]


def s3_error(status, code, message, retry_after=None, sts=False):
    error = f"<Code>{code}</Code><Message>{message}</Message>"
    if sts:  # STS's own shape: <ErrorResponse><Error><Type>Sender</Type><Code>...
        inner = (
            f"<ErrorResponse><Error><Type>Sender</Type>{error}</Error>"
            "<RequestId>vmerge-fault</RequestId></ErrorResponse>"
        )
    else:
        inner = f"<Error>{error}<RequestId>vmerge-fault</RequestId></Error>"
    body = ('<?xml version="1.0" encoding="UTF-8"?>\n' + inner).encode()
    headers = [("Content-Type", "application/xml"), ("Content-Length", str(len(body)))]
    if retry_after is not None:
        headers.append(("Retry-After", str(retry_after)))
    return status, headers, body


STATUS_TEXT = {
    200: "OK",
    204: "No Content",
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
}
# S3's own answers to these statuses (code, message, Retry-After), as a client meets them.
DEFAULT_ERRORS = {
    503: ("SlowDown", "Please reduce your request rate.", 1),
    500: ("InternalError", "We encountered an internal error. Please try again.", None),
}


# Keys whose presigned URLs are honoured (moto's IAM check reads only the Authorization header).
SECRETS = {}


def presigned_as_signed(environ):
    """A GET presigned with SigV4 in its query, checked here as S3 checks it (botocore recomputes
    the signature over the request as received, UNSIGNED-PAYLOAD, within X-Amz-Expires) and handed
    to moto signed in headers with the same key, as moto's IAM check reads only those. Returns
    False when the query's signature does not hold (the request then goes on unsigned: refused)."""
    from botocore.auth import S3SigV4Auth, S3SigV4QueryAuth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    pairs = parse_qsl(environ.get("QUERY_STRING", ""), keep_blank_values=True)
    given = dict(pairs)
    key = given.get("X-Amz-Credential", "").split("/")[0]
    if environ["REQUEST_METHOD"] not in ("GET", "HEAD") or key not in SECRETS:
        return False
    stamp = given.get("X-Amz-Date", "")
    try:
        made = datetime.datetime.strptime(stamp, "%Y%m%dT%H%M%SZ").replace(tzinfo=datetime.timezone.utc)
        expires = int(given.get("X-Amz-Expires", "0"))
    except ValueError:
        return False
    if datetime.datetime.now(datetime.timezone.utc) > made + datetime.timedelta(seconds=expires):
        return False
    host = environ.get("HTTP_HOST", "")
    path = environ.get("RAW_URI", environ.get("PATH_INFO", "")).split("?", 1)[0]
    unsigned = urlencode([(k, v) for k, v in pairs if k != "X-Amz-Signature"], quote_via=quote)
    request = AWSRequest(method=environ["REQUEST_METHOD"], url=f"http://{host}{path}?{unsigned}", headers={"host": host})
    request.context["timestamp"] = stamp
    auth = S3SigV4QueryAuth(Credentials(key, SECRETS[key]), "s3", REGION, expires)
    expected = auth.signature(auth.string_to_sign(request, auth.canonical_request(request)), request)
    if not hmac.compare_digest(expected, given.get("X-Amz-Signature", "")):
        return False
    kept = urlencode([(k, v) for k, v in pairs if not k.startswith("X-Amz-")], quote_via=quote)
    environ["QUERY_STRING"] = kept
    environ["RAW_URI"] = environ["REQUEST_URI"] = path + ("?" + kept if kept else "")
    inner = AWSRequest(method=environ["REQUEST_METHOD"], url=f"http://{host}{environ['RAW_URI']}", headers={"host": host})
    inner.headers["x-amz-content-sha256"] = "UNSIGNED-PAYLOAD"
    S3SigV4Auth(Credentials(key, SECRETS[key]), "s3", REGION).add_auth(inner)
    for name in ("Authorization", "X-Amz-Date", "x-amz-content-sha256"):
        environ["HTTP_" + name.upper().replace("-", "_")] = inner.headers[name]
    return True


class Harness:
    """The WSGI middleware in front of moto: faults, the request log, the controls."""

    def __init__(self, app):
        self.app = app
        self.lock = threading.Lock()
        self.faults = []
        self.log = []
        # The fake metadata service: its session token, and the role it serves (PUT /_vmerge/imds).
        self.imds_token = None
        self.imds_role = None

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
            "ifMatch": environ.get("HTTP_IF_MATCH"),
            "status": 0,
            "bytesSent": 0,
            "fault": None,
        }
        with self.lock:
            self.log.append(entry)
            fault = None if path.startswith(IMDS) else self.take_fault(entry)
        if path.startswith(IMDS):
            status, headers, body = self.metadata(environ, path)
            entry["status"], entry["bytesSent"] = status, len(body)
            start_response(f"{status} {STATUS_TEXT.get(status, 'Status')}", headers)
            return [body]
        if fault is not None:
            entry["fault"] = fault.get("status") or ("dropAnswer" if fault.get("dropAnswer") else None) or (
                f"cutAfter {fault['cutAfter']}" if "cutAfter" in fault else f"cutRequestAfter {fault['cutRequestAfter']}"
            )
        if fault is not None and "status" in fault:
            return self.answer_error(fault, entry, start_response)
        if fault is not None and "cutRequestAfter" in fault:
            # The connection cut while the client is still sending its body (an upload's): read
            # that much of it, then shut the socket down with no answer at all.
            environ["wsgi.input"].read(fault["cutRequestAfter"])
            connection = environ.get("werkzeug.socket")
            if connection is not None:
                connection.shutdown(socket.SHUT_RDWR)
            start_response("500 Cut", [("Content-Length", "0")])
            return [b""]
        if fault is not None and fault.get("dropAnswer"):
            # The request done (an object stored), its answer lost: the connection shut before a
            # byte of it, as a network that drops the reply does.
            def taken(status, headers, exc_info=None):
                entry["status"] = int(status.split(" ", 1)[0])

            for _ in self.app(environ, taken):
                pass
            connection = environ.get("werkzeug.socket")
            if connection is not None:
                connection.shutdown(socket.SHUT_RDWR)
            start_response("500 Dropped", [("Content-Length", "0")])
            return [b""]
        if "X-Amz-Signature=" in environ.get("QUERY_STRING", "") and "HTTP_AUTHORIZATION" not in environ:
            presigned_as_signed(environ)
        if not self.signed(environ) and not self.web_identity(environ):
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
        return "HTTP_AUTHORIZATION" in environ

    @staticmethod
    def web_identity(environ):
        """Whether this is STS's AssumeRoleWithWebIdentity (its body read, then put back for moto)."""
        form = environ.get("CONTENT_TYPE", "").startswith("application/x-www-form-urlencoded")
        if environ["REQUEST_METHOD"] != "POST" or not form:
            return False
        data = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
        environ["wsgi.input"] = io.BytesIO(data)
        return parse_qs(data.decode("utf-8", "replace")).get("Action") == ["AssumeRoleWithWebIdentity"]

    def metadata(self, environ, path):
        """The fake IMDSv2: a session token first, asked for by a PUT; nothing without it."""

        def text(status, body):
            return status, [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))], body.encode()

        if path == IMDS + "api/token":
            if environ["REQUEST_METHOD"] != "PUT" or "HTTP_X_AWS_EC2_METADATA_TOKEN_TTL_SECONDS" not in environ:
                return text(400, "a PUT with X-aws-ec2-metadata-token-ttl-seconds\n")
            with self.lock:
                self.imds_token = "vmerge-imds-" + uuid.uuid4().hex
                return text(200, self.imds_token)
        with self.lock:
            token, role = self.imds_token, self.imds_role
        if token is None or environ.get("HTTP_X_AWS_EC2_METADATA_TOKEN") != token:
            return text(401, "")
        prefix = IMDS + "meta-data/iam/security-credentials/"
        if role is not None and path == prefix:
            return text(200, role["role"])
        if role is not None and path == prefix + role["role"]:
            fields = ("AccessKeyId", "SecretAccessKey", "Token", "Expiration")
            keys = {"Code": "Success", "Type": "AWS-HMAC", **{name: role[name] for name in fields if name in role}}
            return text(200, json.dumps(keys))
        return text(404, "")

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
        retry_after = fault.get("retryAfter", retry_after)
        _, headers, body = s3_error(status, code, message, retry_after, fault.get("sts", False))
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
            if command == "imds":
                self.imds_role = instance_role(json.loads(data)) if method == "PUT" else None
                return as_json(self.imds_role)
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
        if kind == "objects" and method == "DELETE":
            s3().delete_object(bucket, key)
            return as_json({"deleted": key})
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
    SECRETS[options.access_key] = options.secret_key
    make_user("vmerge-denied", options.denied_access_key, options.denied_secret_key, None)
    make_role()
    unsigned_sts_as_at_aws()
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
