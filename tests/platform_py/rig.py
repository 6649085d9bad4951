"""The platform under test as a child process, and the helpers every test shares:
a fresh name, UTF-8 header text, calls run at once."""
import json
import os
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from itertools import count

HERE = os.path.dirname(os.path.abspath(__file__))
DAY = 24 * 3600
_names = count(1)


def fresh(prefix):
    return f"{prefix}-{next(_names)}"


def utf8_as_header(text):
    """http.client sends header text as Latin-1; this makes it send UTF-8 bytes."""
    return text.encode("utf-8").decode("latin-1")


class Platform:
    def __init__(self, *args):
        self.proc = subprocess.Popen(
            [sys.executable, os.path.join(HERE, "platform.py"), "--port", "0", *args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline().strip()
        if not line.startswith("listening on "):
            self.proc.kill()
            raise RuntimeError(f"platform did not start: {line!r} {self.proc.stderr.read()}")
        self.base = line[len("listening on "):]

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.proc.stdout.close()
        self.proc.stderr.close()

    def call(self, method, path, body=None, key=None, api_key="sk_test_m1_1", raw=None):
        headers = {}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        if key is not None:
            headers["Idempotency-Key"] = key
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        if data is not None:
            headers["Content-Type"] = "application/json"
        req = urllib.request.Request(self.base + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=15) as resp:
                return resp.status, json.loads(resp.read() or b"null"), dict(resp.headers)
        except urllib.error.HTTPError as e:
            text = e.read()
            return e.code, json.loads(text or b"null"), dict(e.headers)

    # conveniences
    def create(self, key, order, amount=10000, currency="USD", card="tok_approve", **kw):
        body = {"amount": amount, "currency": currency, "merchant_order_no": order}
        if card:
            body["payment_method"] = card
        return self.call("POST", "/v1/payments", body, key=key, **kw)

    def confirm(self, pid, key, card="tok_approve", **extra):
        return self.call("POST", f"/v1/payments/{pid}/confirm", {"payment_method": card, **extra},
                         key=key)

    def cancel(self, pid, key):
        return self.call("POST", f"/v1/payments/{pid}/cancel", key=key)

    def get(self, path, **kw):
        return self.call("GET", path, **kw)

    def advance(self, seconds):
        return self.call("POST", "/_admin/clock/advance", {"seconds": seconds}, api_key=None)

    def admin(self, method, path, body):
        return self.call(method, path, body, api_key=None)

    def authorizations(self):
        calls = self.get("/_admin/ledger", api_key=None)[1]["calls"]
        return [c for c in calls if c["call"] == "authorize"]

    def by_order(self, order, **kw):
        return self.get(f"/v1/payments?merchant_order_no={urllib.request.quote(order)}", **kw)[1]["data"]


def concurrently(*calls):
    results = [None] * len(calls)

    def run(i, fn):
        results[i] = fn()
    threads = [threading.Thread(target=run, args=(i, fn)) for i, fn in enumerate(calls)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


CLEAN_ARGS = ("--upstream-latency-ms", "100")
