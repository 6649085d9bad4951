#!/usr/bin/env python3
"""PayHub platform (second implementation), standard library only.

    python3 platform.py --port 0 [--seed N] [--har PATH] [--bug NAME ...]
                        [--real-clock] [--upstream-latency-ms MS] [--inflight-wait-ms MS]

Prints `listening on http://127.0.0.1:PORT` once ready.  The HTTP edge lives
here: routing, API keys, the rate-limit and maintenance switches, the
Idempotency-Key header, JSON bodies and the `/_admin` controls; the business
rules are in service.py.  See README.md for the dialect.
"""
import os
import sys

# This directory holds a module named `platform`, which would shadow the
# standard library's; look here last.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE] + [_HERE]
import argparse
import json
import re
import time
import traceback
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit, parse_qsl

from acquirer import Acquirer
from bugs import BUGS, make_policy
from readings import MODEL_CODES, READINGS, Readings
from clock import SimClock, RealClock, iso
from har import HarWriter, entry as har_entry
from model import Caller
from service import Service
from validation import ApiError

API_KEYS = {
    "sk_test_m1_1": Caller("m1", "test", "sk_test_m1_1"),
    "sk_test_m1_2": Caller("m1", "test", "sk_test_m1_2"),
    "sk_live_m1_1": Caller("m1", "live", "sk_live_m1_1"),
    "sk_test_m2_1": Caller("m2", "test", "sk_test_m2_1"),
    "rk_test_m1_1": Caller("m1", "test", "rk_test_m1_1", read_only=True),
}
MERCHANTS = {"m1", "m2"}
RETRY_AFTER_SECONDS = 2
MAX_KEY_CHARS = 255
MAX_BODY_BYTES = 1 << 20
MAX_ADVANCE_SECONDS = 10 * 365 * 24 * 3600

_ID = r"([A-Za-z0-9_\-]{1,100})"
ROUTES = [
    (re.compile(r"^/v1/payments$"), {"POST": "create_payment", "GET": "list_payments"}),
    (re.compile(rf"^/v1/payments/{_ID}$"), {"GET": "get_payment"}),
    (re.compile(rf"^/v1/payments/{_ID}/confirm$"), {"POST": "confirm_payment"}),
    (re.compile(rf"^/v1/payments/{_ID}/cancel$"), {"POST": "cancel_payment"}),
    (re.compile(r"^/v1/checkout/sessions$"), {"POST": "create_session"}),
    (re.compile(rf"^/v1/checkout/sessions/{_ID}$"), {"GET": "get_session"}),
    (re.compile(r"^/v1/refunds$"), {"POST": "create_refund", "GET": "list_refunds"}),
    (re.compile(rf"^/v1/refunds/{_ID}$"), {"GET": "get_refund"}),
]
# The operations a paused channel refuses ("new transactions").
NEW_TRANSACTIONS = {"create_payment", "confirm_payment", "create_session"}


class BadBody(Exception):
    pass


def _utf8_header(value):
    """http.server decodes header bytes as Latin-1; recover the UTF-8 text."""
    if value is None:
        return None
    try:
        return value.encode("latin-1").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return None


class App:
    def __init__(self, service, har=None, verbose=False, bug_names=(), readings=None,
                 admin_token=None):
        self.service = service
        self.admin_token = admin_token
        self.readings = readings or Readings()
        self.har = har
        self.verbose = verbose
        self.bug_names = list(bug_names)
        self.throttled = set()
        self.maintenance = False

    # -------------------------------------------------------------- dispatch

    def dispatch(self, method, target, headers, raw):
        """Returns (status, body-dict, extra-headers)."""
        parts = urlsplit(target)
        path = parts.path
        query = dict(parse_qsl(parts.query, keep_blank_values=True))
        try:
            if path.startswith("/_admin/"):
                if self.admin_token is not None \
                        and headers.get("X-Admin-Token") != self.admin_token:
                    raise ApiError(401, "admin_token_required",
                                   "The control plane takes the X-Admin-Token header.")
                return self.admin(method, path, raw)
            return self.api(method, path, query, headers, raw)
        except ApiError as e:
            self.service.publish()
            extra = {}
            if e.status == 429:
                value = {"seconds": str(RETRY_AFTER_SECONDS), "zero": "0", "absent": None,
                         "http_date": formatdate(self.service.clock.now() + RETRY_AFTER_SECONDS,
                                                usegmt=True),
                         }[self.readings.retry_after_429]
                if value is not None:
                    extra["Retry-After"] = value
            elif e.status == 503 and self.readings.retry_after_503 == "present":
                extra["Retry-After"] = str(RETRY_AFTER_SECONDS)
            if self.readings.unnamed_codes == "model_codes":
                e.code = MODEL_CODES.get(e.code, e.code)
            if e.status == 405:
                extra["Allow"] = e.extra.pop("allow")
            return e.status, e.body(), extra

    def api(self, method, path, query, headers, raw):
        operation, args = self.route(method, path)
        caller = self.authenticate(headers)
        gate = None
        if method == "POST" and self.readings.refusal_order == "refusal_first":
            # The request's own refusals before the throttle and the pause.
            if caller.read_only:
                raise ApiError(403, "api_key_read_only", "This API key can only read.")
            self.idempotency_key(headers)
        limited = method == "POST" or self.readings.rate_limit_scope == "every_request"
        if caller.merchant in self.throttled and limited:
            gate = ApiError(429, "rate_limited",
                            f"Too many requests for merchant {caller.merchant}; retry after "
                            f"{RETRY_AFTER_SECONDS} seconds with the same Idempotency-Key.",
                            retryable=True, merchant=caller.merchant)
            if not self.service.policy.throttle_after_execute:
                raise gate
        if method == "POST" and caller.read_only:
            raise ApiError(403, "api_key_read_only", "This API key can only read.")
        paused = (operation == "create_payment" if self.readings.pause_scope == "creates_only"
                  else operation in NEW_TRANSACTIONS)
        if gate is None and self.maintenance and paused:
            gate = ApiError(503, "temporarily_unavailable",
                            "Temporarily unable to process payments; retry later with the "
                            "same Idempotency-Key.", retryable=True)
            if not self.service.policy.maintenance_after_execute:
                raise gate
        try:
            status, body = self.execute(operation, args, method, query, headers, raw, caller)
        except ApiError:
            if gate is None:
                raise
        self.service.publish()
        if gate is not None:
            raise gate
        return status, body, {}

    def route(self, method, path):
        for pattern, methods in ROUTES:
            m = pattern.match(path)
            if m:
                if method not in methods:
                    raise ApiError(405, "method_not_allowed", f"{method} is not allowed on {path}.",
                                   allow=", ".join(sorted(methods)))
                return methods[method], m.groups()
        raise ApiError(404, "route_not_found", f"No such endpoint: {method} {path}.")

    def authenticate(self, headers):
        auth = headers.get("Authorization") or ""
        scheme, _, token = auth.partition(" ")
        caller = API_KEYS.get(token.strip()) if scheme.lower() == "bearer" else None
        if caller is None:
            raise ApiError(401, "invalid_api_key",
                           "Provide a valid API key as `Authorization: Bearer <key>`.")
        return caller

    def idempotency_key(self, headers):
        raw = headers.get("Idempotency-Key")
        if raw is None:
            raise ApiError(400, "missing_idempotency_key",
                           "The Idempotency-Key header is required.", field="Idempotency-Key")
        key = _utf8_header(raw)
        if key is None or not (1 <= self.service.policy.key_length(key) <= MAX_KEY_CHARS) \
                or any(ord(c) < 32 or ord(c) == 127 for c in key) \
                or (self.readings.key_charset == "printable_ascii"
                    and any(not 32 <= ord(c) <= 126 for c in key)):
            raise ApiError(400, "invalid_idempotency_key",
                           f"Idempotency-Key must be 1-{MAX_KEY_CHARS} printable characters.",
                           field="Idempotency-Key")
        return key

    def execute(self, operation, args, method, query, headers, raw, caller):
        svc = self.service
        if method == "GET":
            if operation.startswith("list_"):
                return getattr(svc, operation)(caller, query)
            return getattr(svc, operation)(caller, *args)
        key = self.idempotency_key(headers)
        if operation == "cancel_payment":
            return svc.cancel_payment(caller, key, *args)   # no request body
        body = self.json_body(raw)
        if operation == "confirm_payment":
            return svc.confirm_payment(caller, key, args[0], body)
        return getattr(svc, operation)(caller, key, body)

    @staticmethod
    def json_body(raw):
        if not raw:
            return None
        try:
            return json.loads(raw.decode("utf-8"))
        except RecursionError:
            raise ApiError(400, "malformed_json", "The request body is nested too deeply.")
        except (UnicodeDecodeError, ValueError) as e:
            raise ApiError(400, "malformed_json", f"The request body is not valid JSON: {e}.")

    # --------------------------------------------------------------- controls

    def admin(self, method, path, raw):
        svc = self.service
        if path == "/_admin/reset" and method == "POST":
            svc.reset()
            self.throttled.clear()
            self.maintenance = False
            return 200, {"reset": True, "now": iso(svc.clock.now())}, {}
        if path == "/_admin/clock/advance" and method == "POST":
            seconds = (self.json_body(raw) or {}).get("seconds")
            if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) \
                    or not (0 <= seconds <= MAX_ADVANCE_SECONDS):
                raise ApiError(400, "invalid_parameter",
                               f"`seconds` must be a number from 0 to {MAX_ADVANCE_SECONDS}.",
                               field="seconds")
            if not svc.clock.simulated:
                raise ApiError(409, "clock_not_simulated", "The platform runs on the real clock.")
            now = svc.advance(seconds)
            svc.publish()
            return 200, {"now": iso(now), "epoch_seconds": now}, {}
        if path == "/_admin/clock" and method == "GET":
            now = svc.clock.now()
            return 200, {"now": iso(now), "epoch_seconds": now,
                         "simulated": svc.clock.simulated}, {}
        m = re.match(r"^/_admin/merchants/([^/]+)/throttle$", path)
        if m and method == "PUT":
            merchant = m.group(1)
            if merchant not in MERCHANTS:
                raise ApiError(404, "resource_not_found", f"No merchant {merchant}.")
            enabled = self._flag(raw, "enabled")
            (self.throttled.add if enabled else self.throttled.discard)(merchant)
            return 200, {"merchant": merchant, "throttled": enabled}, {}
        if path == "/_admin/maintenance" and method == "POST":
            self.maintenance = self._flag(raw, "on")
            return 200, {"maintenance": self.maintenance}, {}
        if path == "/_admin/acquirer/latency" and method == "PUT":
            ms = (self.json_body(raw) or {}).get("ms")
            if isinstance(ms, bool) or not isinstance(ms, (int, float)) or not (0 <= ms <= 60000):
                raise ApiError(400, "invalid_parameter", "`ms` must be a number from 0 to 60000.",
                               field="ms")
            svc.acquirer.latency_s = ms / 1000.0
            return 200, {"latency_ms": ms}, {}
        if path == "/_admin/events" and method == "GET":
            return 200, {"events": svc.event_log()}, {}
        if path == "/_admin/ledger" and method == "GET":
            return 200, {"calls": svc.ledger()}, {}
        if path == "/_admin/bugs" and method == "GET":
            return 200, {"planted": self.bug_names}, {}
        raise ApiError(404, "route_not_found", f"No such control: {method} {path}.")

    def _flag(self, raw, name):
        value = (self.json_body(raw) or {}).get(name)
        if not isinstance(value, bool):
            raise ApiError(400, "invalid_parameter", f"`{name}` must be true or false.", field=name)
        return value


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "PayHubPy/1.0"

    def version_string(self):
        return self.server_version
    app = None   # set by serve()

    def do_GET(self):
        self._handle("GET")

    def do_POST(self):
        self._handle("POST")

    def do_PUT(self):
        self._handle("PUT")

    def do_DELETE(self):
        self._handle("DELETE")

    def do_PATCH(self):
        self._handle("PATCH")

    def do_OPTIONS(self):
        self._handle("OPTIONS")

    def log_message(self, fmt, *args):
        if self.app.verbose:
            super().log_message(fmt, *args)

    def _read_body(self):
        """The request body (Content-Length or chunked); ValueError if unreadable."""
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            parts, total = [], 0
            while True:
                size = int(self.rfile.readline(100).split(b";")[0].strip() or b"x", 16)
                if size == 0:
                    while self.rfile.readline(1000) not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(parts)
                total += size
                if total > MAX_BODY_BYTES:
                    raise ValueError
                parts.append(self.rfile.read(size))
                self.rfile.readline(10)
        length = int(self.headers.get("Content-Length") or 0)
        if length < 0 or length > MAX_BODY_BYTES:
            raise ValueError
        return self.rfile.read(length) if length else b""

    def _handle(self, method):
        started, t0 = time.time(), time.monotonic()
        app = self.app
        raw = b""
        try:
            raw = self._read_body()
        except (ValueError, OSError):
            status, body, extra = 400, ApiError(400, "invalid_request",
                                                "The request body could not be read.").body(), {}
            self.close_connection = True
        else:
            try:
                status, body, extra = app.dispatch(method, self.path, self.headers, raw)
            except Exception:
                traceback.print_exc(file=sys.stderr)
                status, body, extra = 500, ApiError(500, "internal_error", "Unexpected failure.",
                                                    retryable=True).body(), {}
        text = json.dumps(body, ensure_ascii=False)
        data = text.encode("utf-8")
        headers = [("Content-Type", "application/json; charset=utf-8"),
                   ("Content-Length", str(len(data))), ("Cache-Control", "no-store")]
        headers += list(extra.items())
        record = None
        if app.har is not None:
            # Recorded before the answer is sent, so a client that has read the
            # answer finds the exchange in the file.
            host = self.server.server_address
            req_headers = [(k, _utf8_header(v) or v) for k, v in self.headers.items()]
            record = har_entry(
                started, (time.monotonic() - t0) * 1000.0, method,
                f"http://{host[0]}:{host[1]}{self.path}", req_headers,
                raw.decode("utf-8", "replace"), status, self.responses.get(status, ("",))[0],
                headers, text, query=parse_qsl(urlsplit(self.path).query, keep_blank_values=True))
            app.har.add(record)
        try:
            self.send_response(status)
            for k, v in headers:
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()
        except OSError as e:
            if record is not None:
                record["_error"] = f"the answer was not delivered: {e}"
                app.har.update(record)


def main(argv=None):
    ap = argparse.ArgumentParser(description="PayHub platform (second implementation)")
    ap.add_argument("--port", type=int, default=8090)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--har", metavar="PATH")
    ap.add_argument("--bug", action="append", default=[], metavar="NAME")
    ap.add_argument("--list-bugs", action="store_true")
    ap.add_argument("--reading", action="append", default=[], metavar="POINT=NAME",
                    help="take another reading where the contract is silent (readings.py)")
    ap.add_argument("--list-readings", action="store_true")
    ap.add_argument("--real-clock", action="store_true")
    ap.add_argument("--upstream-latency-ms", type=float, default=20.0)
    ap.add_argument("--inflight-wait-ms", type=float, default=10000.0)
    ap.add_argument("--webhook-url", metavar="URL", help="POST every event there")
    ap.add_argument("--admin-token", metavar="TOKEN",
                    help="every /_admin control requires the header X-Admin-Token: TOKEN")
    ap.add_argument("--card-objects", action="store_true",
                    help='payment_method is {"type": "card", "card": {"token": …}}, not a string')
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args(argv)
    if args.list_bugs:
        for name, bug in BUGS.items():
            print(f"{name}\t{bug.rule}\t{bug.what}")
        return 0
    if args.list_readings:
        for point, names in READINGS.items():
            print(f"{point}\t{' '.join(names)}")
        return 0
    try:
        policy = make_policy(args.bug)
        readings = Readings(args.reading)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    clock = RealClock() if args.real_clock else SimClock()
    service = Service(clock, policy, Acquirer(args.upstream_latency_ms / 1000.0),
                      seed=args.seed, inflight_wait_s=args.inflight_wait_ms / 1000.0,
                      webhook_url=args.webhook_url, readings=readings,
                      card_objects=args.card_objects)
    try:
        har = HarWriter(args.har) if args.har else None
    except OSError as e:
        print(f"error: cannot write HAR {args.har}: {e}", file=sys.stderr)
        return 2
    Handler.app = App(service, har, args.verbose, args.bug, readings, args.admin_token)
    try:
        server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    except OSError as e:
        print(f"error: cannot listen on 127.0.0.1:{args.port}: {e}", file=sys.stderr)
        return 2
    server.daemon_threads = True
    print(f"listening on http://127.0.0.1:{server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
