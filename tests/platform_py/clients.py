#!/usr/bin/env python3
"""Two scripted merchant clients, for capturing traffic (HAR) against the platform.

    python3 clients.py --base http://127.0.0.1:PORT --client reference|dont [--har PATH] [--tag T]

`reference` follows the contract's advice: one key per business submission,
derived from the business (`payment.create:ORDER:1`), the same key on every
retry after a network error, a 429 or a 5xx (backoff, Retry-After honoured),
a query by merchant_order_no when the answer was lost, a new key only for a
new card after a definitive failure, one query per object at most every 10 s.
`dont` does what the contract's "Don't do this" warns against: a new key
(and then a new order number) after a timeout or a 500, the same 409 retried,
Retry-After ignored, back-to-back polling, a 202 cancel taken as canceled, a
refund re-applied under a new refund number, one key on two endpoints.

The situations (throttle, maintenance, a slow acquirer, the clock) are set up
through the platform's `/_admin` controls, which a HAR reader ignores as not
the API.  With `--har` the client writes its own HAR, where a timeout is an
entry with `_error` and no answer (the platform's `--har` sees the same
request answered).
"""
import os
import sys

# This directory holds a module named `platform`, which would shadow the
# standard library's; look here last.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE] + [_HERE]
import argparse
import json
import socket
import threading
import time
import urllib.error
import urllib.request
import uuid
from urllib.parse import quote

from har import HarWriter, entry as har_entry


class Lost(Exception):
    """No answer reached the client (timeout, reset)."""


def utf8_as_header(text):
    """http.client sends header text as Latin-1; this makes it send UTF-8 bytes."""
    return text.encode("utf-8").decode("latin-1")


class Client:
    def __init__(self, base, api_key="sk_test_m1_1", har=None, log=print):
        self.base = base.rstrip("/")
        self.api_key = api_key
        self.har = har
        self.log = log

    def send(self, method, path, body=None, key=None, timeout=20.0):
        headers = {"Authorization": f"Bearer {self.api_key}"}
        if key is not None:
            headers["Idempotency-Key"] = key
        data = json.dumps(body).encode() if body is not None else None
        if data is not None:
            headers["Content-Type"] = "application/json"
        req = urllib.request.Request(self.base + path, data=data, method=method, headers=headers)
        started, t0 = time.time(), time.monotonic()
        status, text, resp_headers, error = 0, "", [], None
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                status, text, resp_headers = resp.status, resp.read().decode(), list(resp.headers.items())
        except urllib.error.HTTPError as e:
            status, text, resp_headers = e.code, e.read().decode(), list(e.headers.items())
        except (urllib.error.URLError, socket.timeout, TimeoutError, ConnectionError) as e:
            error = f"{type(e).__name__}: {getattr(e, 'reason', e)}"
        elapsed = (time.monotonic() - t0) * 1000.0
        if self.har is not None and not path.startswith("/_admin/"):
            self.har.add(har_entry(started, elapsed, method, self.base + path, list(headers.items()),
                                   data.decode() if data else "", status, "", resp_headers, text,
                                   error=error))
        shown = f"{method} {path}" + (f"  Idempotency-Key: {key}" if key else "")
        if error:
            self.log(f"  {shown}  ->  (no answer: {error})")
            raise Lost(error)
        parsed = json.loads(text) if text else None
        self.log(f"  {shown}  ->  {status} {_short(parsed)}")
        return status, parsed, dict(resp_headers)

    def control(self, method, path, body):
        return self.send(method, path, body)

    # The contract's reference retry: same key on network errors, 429 and 5xx.
    def post_with_retry(self, path, body, key, max_attempts=5):
        for attempt in range(1, max_attempts + 1):
            res = None
            try:
                res = self.send("POST", path, body, key=key)
            except Lost:
                pass
            if res is not None and res[0] != 429 and res[0] < 500:
                return res
            if attempt == max_attempts:
                break
            wait = min(30.0, 1.0 * 2 ** (attempt - 1))
            if res is not None and res[0] == 429:
                try:
                    wait = float(res[2].get("Retry-After"))
                except (TypeError, ValueError):
                    pass
            yield_wait = getattr(self, "on_wait", None)
            if yield_wait:
                yield_wait(res)
            time.sleep(wait)
        return None   # result unknown: query or wait for the webhook

    def find_payment_by_order_no(self, order_no):
        status, page, _ = self.send("GET", f"/v1/payments?merchant_order_no={quote(order_no)}",
                                    timeout=10)
        if status != 200:
            raise RuntimeError(f"query failed: HTTP {status}")
        return page["data"][0] if page["data"] else None


def _short(body):
    if not isinstance(body, dict):
        return ""
    if "error" in body:
        e = body["error"]
        rel = f" related={e['related_resource_id']}" if e.get("related_resource_id") else ""
        return f"error={e['code']}{rel}"
    if body.get("object") == "list":
        return f"list[{', '.join(d['id'] + ':' + d['status'] for d in body['data'])}]"
    return f"{body.get('id', '')} status={body.get('status')} version={body.get('version')}"


def payment_body(order, amount=10000, card="tok_approve"):
    return {"amount": amount, "currency": "USD", "merchant_order_no": order, "payment_method": card}


# ------------------------------------------------------------------ reference

def reference(c, tag):
    log = c.log
    log("S1: the answer is lost (slow acquirer, client timeout); retry with the same key")
    order = f"{tag}-S1"
    key = f"payment.create:{order}:1"
    c.control("PUT", "/_admin/acquirer/latency", {"ms": 1500})
    try:
        c.send("POST", "/v1/payments", payment_body(order), key=key, timeout=0.5)
    except Lost:
        pass
    time.sleep(1.2)
    c.control("PUT", "/_admin/acquirer/latency", {"ms": 0})
    c.post_with_retry("/v1/payments", payment_body(order), key)

    log("S2: 500; retry with the same key; then the platform verifies")
    order = f"{tag}-S2"
    res = c.post_with_retry("/v1/payments", payment_body(order, card="tok_upstream_500"),
                            f"payment.create:{order}:1", max_attempts=2)
    c.control("POST", "/_admin/clock/advance", {"seconds": 61})
    if res is not None:
        c.send("GET", f"/v1/payments/{res[1]['id']}", timeout=10)

    log("Crash before the answer was saved: query by merchant_order_no")
    order = f"{tag}-CRASH"
    c.post_with_retry("/v1/payments", payment_body(order), f"payment.create:{order}:1")
    found = c.find_payment_by_order_no(order)
    log(f"  found {found['id'] if found else None}")

    log("S10: 429; wait Retry-After; same key")
    order = f"{tag}-S10"
    c.control("PUT", "/_admin/merchants/m1/throttle", {"enabled": True})
    c.on_wait = lambda res: c.control("PUT", "/_admin/merchants/m1/throttle", {"enabled": False})
    c.post_with_retry("/v1/payments", payment_body(order), f"payment.create:{order}:1")
    c.on_wait = None

    log("S13: 503; later, same key")
    order = f"{tag}-S13"
    c.control("POST", "/_admin/maintenance", {"on": True})
    c.on_wait = lambda res: c.control("POST", "/_admin/maintenance", {"on": False})
    c.post_with_retry("/v1/payments", payment_body(order), f"payment.create:{order}:1")
    c.on_wait = None

    log("S9: declined; new card under a new key (sequence number + 1)")
    order = f"{tag}-S9"
    _, pay, _ = c.post_with_retry("/v1/payments", payment_body(order, card="tok_decline"),
                                  f"payment.create:{order}:1")
    if pay["status"] == "failed":
        c.post_with_retry(f"/v1/payments/{pay['id']}/confirm", {"payment_method": "tok_approve"},
                          f"payment.confirm:{order}:2")

    log("S11: refund; the answer is taken as lost; same key; no polling")
    refund_no = f"{tag}-R1"
    body = {"payment_id": pay["id"], "amount": 2500, "merchant_refund_no": refund_no}
    c.post_with_retry("/v1/refunds", body, f"refund.create:{refund_no}:1")
    c.post_with_retry("/v1/refunds", body, f"refund.create:{refund_no}:1")

    log("Slow acquirer: 202 processing; query once after the first recommended delay")
    order = f"{tag}-SLOW"
    _, slow, _ = c.post_with_retry("/v1/payments", payment_body(order, card="tok_approve_slow"),
                                   f"payment.create:{order}:1")
    c.control("POST", "/_admin/clock/advance", {"seconds": 30})
    c.send("GET", f"/v1/payments/{slow['id']}", timeout=10)

    log("S12: cancel answered 202: not canceled; query later")
    order = f"{tag}-S12"
    _, act, _ = c.post_with_retry("/v1/payments", payment_body(order, card="tok_3ds_cancel_unconfirmed"),
                                  f"payment.create:{order}:1")
    c.post_with_retry(f"/v1/payments/{act['id']}/cancel", None, f"payment.cancel:{order}:1")
    c.control("POST", "/_admin/clock/advance", {"seconds": 31})
    c.send("GET", f"/v1/payments/{act['id']}", timeout=10)

    log("Daily reconciliation of refunds")
    c.control("POST", "/_admin/clock/advance", {"seconds": 3600})
    c.send("GET", "/v1/refunds?status=processing", timeout=10)


# ----------------------------------------------------------------------- dont

def dont(c, tag):
    log = c.log
    log("Timeout, then a new key, then a new order number")
    order = f"{tag}-T"
    c.control("PUT", "/_admin/acquirer/latency", {"ms": 1500})
    try:
        c.send("POST", "/v1/payments", payment_body(order), key=str(uuid.uuid4()), timeout=0.5)
    except Lost:
        pass
    time.sleep(1.2)
    c.control("PUT", "/_admin/acquirer/latency", {"ms": 0})
    c.send("POST", "/v1/payments", payment_body(order), key=str(uuid.uuid4()))
    c.send("POST", "/v1/payments", payment_body(f"{order}-retry"), key=str(uuid.uuid4()))

    log("500, then a new key and a new order number")
    order = f"{tag}-E"
    c.send("POST", "/v1/payments", payment_body(order, card="tok_upstream_500"), key=str(uuid.uuid4()))
    c.send("POST", "/v1/payments", payment_body(f"{order}-retry"), key=str(uuid.uuid4()))

    log("Parameters changed under a key; the 409 retried as it is")
    order = f"{tag}-C"
    key = str(uuid.uuid4())
    c.send("POST", "/v1/payments", payment_body(order), key=key)
    for _ in range(3):
        c.send("POST", "/v1/payments", payment_body(order, amount=12000), key=key)

    log("429: Retry-After ignored, then a new key")
    order = f"{tag}-RL"
    key = str(uuid.uuid4())
    c.control("PUT", "/_admin/merchants/m1/throttle", {"enabled": True})
    c.send("POST", "/v1/payments", payment_body(order), key=key)
    c.send("POST", "/v1/payments", payment_body(order), key=key)
    c.send("POST", "/v1/payments", payment_body(order), key=str(uuid.uuid4()))
    c.control("PUT", "/_admin/merchants/m1/throttle", {"enabled": False})
    c.send("POST", "/v1/payments", payment_body(order), key=str(uuid.uuid4()))

    log("202 processing: polled back to back")
    order = f"{tag}-P"
    _, slow, _ = c.send("POST", "/v1/payments", payment_body(order, card="tok_approve_slow"),
                        key=str(uuid.uuid4()))
    for _ in range(3):
        c.send("GET", f"/v1/payments/{slow['id']}")
    c.send("GET", f"/v1/payments?merchant_order_no={quote(order)}")

    log("Cancel answered 202 taken as canceled: the order is paid again under a new number")
    order = f"{tag}-X"
    _, act, _ = c.send("POST", "/v1/payments", payment_body(order, card="tok_3ds_cancel_race"),
                       key=str(uuid.uuid4()))
    c.send("POST", f"/v1/payments/{act['id']}/cancel", key=str(uuid.uuid4()))
    c.send("POST", "/v1/payments", payment_body(f"{order}-2"), key=str(uuid.uuid4()))
    c.control("POST", "/_admin/clock/advance", {"seconds": 31})
    c.send("GET", f"/v1/payments/{act['id']}")

    log("Refund answer taken as lost: applied again under a new refund number; "
        "one key on two endpoints")
    order = f"{tag}-R"
    key = str(uuid.uuid4())
    _, pay, _ = c.send("POST", "/v1/payments", payment_body(order), key=key)
    body = {"payment_id": pay["id"], "amount": 4000, "merchant_refund_no": f"{tag}-RF1"}
    c.send("POST", "/v1/refunds", body, key=key)
    c.send("POST", "/v1/refunds", {**body, "merchant_refund_no": f"{tag}-RF1-retry"},
           key=str(uuid.uuid4()))


# ---------------------------------------------------------------------- probe

def probe(c, tag):
    """One short exchange per platform rule the wire shows, on the simulated clock; the
    one real wait is the 429's Retry-After (2 s, spent on the other exchanges first):
    each object is queried at most once, no key is re-sent with other parameters except
    in the conflict probe and after the 422 (the corrected request), no key serves two
    endpoints."""
    log = c.log
    advance = lambda s: c.control("POST", "/_admin/clock/advance", {"seconds": s})

    log("429: not executed; the same key once Retry-After has passed (at the end) creates")
    throttled = f"{tag}-THR"
    c.control("PUT", "/_admin/merchants/m1/throttle", {"enabled": True})
    _, _, headers = c.send("POST", "/v1/payments", payment_body(throttled),
                           key=f"payment.create:{throttled}:1")
    c.control("PUT", "/_admin/merchants/m1/throttle", {"enabled": False})
    wait = dict(headers).get("Retry-After")
    limited_at = time.monotonic()

    log("503 temporarily_unavailable: not accepted; later, the same key creates")
    order = f"{tag}-MNT"
    c.control("POST", "/_admin/maintenance", {"on": True})
    c.send("POST", "/v1/payments", payment_body(order), key=f"payment.create:{order}:1")
    c.control("POST", "/_admin/maintenance", {"on": False})
    c.send("POST", "/v1/payments", payment_body(order), key=f"payment.create:{order}:1")

    log("422: the key is not used up; the corrected request under it creates")
    order = f"{tag}-REJ"
    c.send("POST", "/v1/payments", {**payment_body(order), "currency": "XYZ"},
           key=f"payment.create:{order}:1")
    c.send("POST", "/v1/payments", payment_body(order), key=f"payment.create:{order}:1")

    log("Same key, another currency: 409 idempotency_conflict")
    order = f"{tag}-CUR"
    key = f"payment.create:{order}:1"
    c.send("POST", "/v1/payments", payment_body(order), key=key)
    c.send("POST", "/v1/payments", {**payment_body(order), "currency": "EUR"}, key=key)

    log("A replay: 200 with the object")
    order = f"{tag}-REPLAY"
    key = f"payment.create:{order}:1"
    c.send("POST", "/v1/payments", payment_body(order), key=key)
    c.send("POST", "/v1/payments", payment_body(order), key=key)

    log("A refund number used again under a new key: not a second refund")
    order = f"{tag}-RN"
    _, pay, _ = c.send("POST", "/v1/payments", payment_body(order), key=f"payment.create:{order}:1")
    body = {"payment_id": pay["id"], "amount": 1000, "merchant_refund_no": f"{tag}-R1"}
    c.send("POST", "/v1/refunds", body, key=f"refund.create:{tag}-R1:1")
    c.send("POST", "/v1/refunds", body, key=f"refund.create:{tag}-R1:2")

    log("A cancel the acquirer does not confirm in time: 202, the status kept")
    order = f"{tag}-S12"
    _, act, _ = c.send("POST", "/v1/payments", payment_body(order, card="tok_3ds_cancel_unconfirmed"),
                       key=f"payment.create:{order}:1")
    c.send("POST", f"/v1/payments/{act['id']}/cancel", key=f"payment.cancel:{order}:1")

    log("A slow card: 202 processing; once it answered, a query shows a higher version")
    order = f"{tag}-SLOW"
    _, slow, _ = c.send("POST", "/v1/payments", payment_body(order, card="tok_approve_slow"),
                        key=f"payment.create:{order}:1")
    advance(30)
    c.send("GET", f"/v1/payments/{slow['id']}")

    log("A lookup by another case of the order number finds nothing")
    order = f"{tag}-Case"
    c.send("POST", "/v1/payments", payment_body(order), key=f"payment.create:{order}:1")
    c.send("GET", f"/v1/payments?merchant_order_no={quote(order.lower())}")

    log("A retry under the rotated API key: the same scope, the same object")
    order = f"{tag}-ROT"
    key = f"payment.create:{order}:1"
    c.send("POST", "/v1/payments", payment_body(order), key=key)
    rotated = Client(c.base, "sk_test_m1_2", c.har, c.log)
    rotated.send("POST", "/v1/payments", payment_body(order), key=key)

    log("A declined card, then a confirm that names an amount: the Payment keeps its own")
    order = f"{tag}-AMT"
    _, failed, _ = c.send("POST", "/v1/payments", payment_body(order, card="tok_decline"),
                          key=f"payment.create:{order}:1")
    c.send("POST", f"/v1/payments/{failed['id']}/confirm",
           {"payment_method": "tok_approve", "amount": 5000}, key=f"payment.confirm:{order}:2")

    log("The same key in live: a Payment of its own")
    order = f"{tag}-ENV"
    key = f"payment.create:{order}:1"
    c.send("POST", "/v1/payments", payment_body(order), key=key)
    live = Client(c.base, "sk_live_m1_1", c.har, c.log)
    live.send("POST", "/v1/payments", payment_body(order), key=key)

    log("A declined card, then its key again with another card: the original result (S7)")
    order = f"{tag}-S7"
    key = f"payment.create:{order}:1"
    c.send("POST", "/v1/payments", payment_body(order, card="tok_decline"), key=key)
    c.send("POST", "/v1/payments", payment_body(order, card="tok_approve"), key=key)

    log("A confirm under a new key while the Payment is processing: 409 payment_in_progress (S8)")
    order = f"{tag}-S8"
    _, silent, _ = c.send("POST", "/v1/payments", payment_body(order, card="tok_silent"),
                          key=f"payment.create:{order}:1")
    c.send("POST", f"/v1/payments/{silent['id']}/confirm", {"payment_method": "tok_approve"},
           key=f"payment.confirm:{order}:2")

    log("Three declined attempts, then a fourth confirm: refused (at most 3 attempts)")
    order = f"{tag}-ATT"
    _, att, _ = c.send("POST", "/v1/payments", payment_body(order, card="tok_decline"),
                       key=f"payment.create:{order}:1")
    for n, card in ((2, "tok_decline"), (3, "tok_decline"), (4, "tok_approve")):
        c.send("POST", f"/v1/payments/{att['id']}/confirm", {"payment_method": card},
               key=f"payment.confirm:{order}:{n}")

    log("A refund of more than the Payment's amount: refused")
    order = f"{tag}-OVER"
    _, paid, _ = c.send("POST", "/v1/payments", payment_body(order), key=f"payment.create:{order}:1")
    body = {"payment_id": paid["id"], "amount": paid["amount"] + 5000,
            "merchant_refund_no": f"{tag}-R2"}
    c.send("POST", "/v1/refunds", body, key=f"refund.create:{tag}-R2:1")

    log("A key with a few non-ASCII characters (under 255 bytes): accepted")
    order = f"{tag}-KEYS"
    c.send("POST", "/v1/payments", payment_body(order), key=utf8_as_header(f"{order}-\u00e9\u00e9"))

    log("A key of 190 non-ASCII characters (380 bytes of UTF-8) after its prefix: accepted")
    order = f"{tag}-KEY"
    key = utf8_as_header(f"{order}-" + "\u00e9" * 190)
    c.send("POST", "/v1/payments", payment_body(order), key=key)

    log("Two requests under one key at once: one executes, the other waits for its object")
    order = f"{tag}-CONC"
    key = f"payment.create:{order}:1"
    c.control("PUT", "/_admin/acquirer/latency", {"ms": 300})
    both = [threading.Thread(target=c.send, args=("POST", "/v1/payments", payment_body(order)),
                             kwargs={"key": key}) for _ in range(2)]
    for t in both:
        t.start()
    for t in both:
        t.join()
    c.control("PUT", "/_admin/acquirer/latency", {"ms": 20})

    # Before the clock passes the retention: the key's record still there.
    log("The 429's key once its Retry-After has passed: the first execution, 201")
    time.sleep(max(0.0, float(wait or 0) + 0.1 - (time.monotonic() - limited_at)))
    c.send("POST", "/v1/payments", payment_body(throttled), key=f"payment.create:{throttled}:1")

    log("Past the 7-day retention, a new key for a used order number: still one Payment")
    order = f"{tag}-RET"
    c.send("POST", "/v1/payments", payment_body(order), key=f"payment.create:{order}:1")
    advance(8 * 86400)
    c.send("POST", "/v1/payments", payment_body(order), key=f"payment.create:{order}:2")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", required=True)
    ap.add_argument("--client", required=True, choices=["reference", "dont", "probe"])
    ap.add_argument("--api-key", default="sk_test_m1_1")
    ap.add_argument("--tag", help="prefix of order and refund numbers (default: client-time)")
    ap.add_argument("--har", metavar="PATH", help="write the client's own HAR")
    ap.add_argument("--reset", action="store_true", help="POST /_admin/reset first")
    args = ap.parse_args(argv)
    tag = args.tag or f"{args.client.upper()}-{int(time.time())}"
    har = HarWriter(args.har) if args.har else None
    c = Client(args.base, args.api_key, har)
    try:
        if args.reset:
            c.control("POST", "/_admin/reset", {})
        {"reference": reference, "dont": dont, "probe": probe}[args.client](c, tag)
    except (Lost, RuntimeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
