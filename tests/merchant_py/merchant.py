#!/usr/bin/env python3
"""A merchant integration of the PayHub contract, written from the contract alone:
Python standard library, an SQLite orders table, idempotency keys derived from the
business (payment.create:ORDER:1, payment.confirm:ORDER:N, refund.create:REFUND:1) and
persisted before they are sent.

    merchant.py BASE FLOW [MISTAKE]

FLOW is the business the test asks for (pay, pay_then_confirm, cancel, refund, …);
MISTAKE, if given, switches on one mistake the contract warns against (see MISTAKES).
With MERCHANT_WEBHOOK_PORT set it listens for the platform's webhooks on 127.0.0.1 at
that port and applies each to its orders table (the `webhook` flow). At the end it posts its journal to the sandbox (POST /__sandbox/journal: each order's
state as shown to the payer, each fulfilment, each order's cart) and prints one JSON
line: the order's state as shown to the payer and the HTTP statuses it saw.
"""

import http.server
import json
import os
import queue
import sqlite3
import sys
import threading
import time
import urllib.error
import urllib.request

MISTAKES = {
    "renumber_after_lost_create": "a create's answer lost: the cart paid again as ORDER-…-retry",
    "new_key_after_lost_create": "a create's answer lost: the same order sent under a new key",
    "renumber_after_lost_confirm": "a confirm's answer lost: the cart paid again as a new order",
    "new_confirm_key_after_lost_confirm": "a confirm's answer lost: confirmed again under a new key",
    "cancel_202_as_canceled": "a cancel answered 202 read as canceled: the cart paid again",
    "manual_review_as_failed": "manual_review read as failed: the cart charged again",
    "renumber_lost_refund": "a refund's answer lost: applied again under a new refund number",
    "card_retry_same_key": "a card retry under the failed confirm's key",
    "new_key_after_503": "a 503 retried under a new key",
    "new_key_after_429": "a 429 retried under a new key",
    "confirm_while_processing": "a confirm under a new key while the Payment is processing",
    "queries_too_soon": "queries 1 s apart",
    "fulfil_every_success": "fulfils on every answer that shows succeeded",
    "failed_on_manual_review": "manual_review shown to the payer as failed (not charged again)",
    "queries_after_final": "queries on after a query showed the Payment succeeded",
    "short_timeout": "gives up on a create or confirm after 5 s (the contract asks 20 s)",
    "queries_after_webhook": "queries a Payment after its webhook showed it succeeded",
}

API_KEY = "ak_1"


RETRY_AFTER = {"s": 1.0}

# Seconds the client waits for an answer: at least 20 for a create or confirm, 10 for a
# query (TIMEOUT-01).
TIMEOUT = {"post": 30, "get": 15}


# Webhooks received, in arrival order: put by the listener's thread, applied by the main
# thread (the SQLite connection is the main thread's).
WEBHOOKS = queue.Queue()


class Hooks(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        WEBHOOKS.put(json.loads(self.rfile.read(n) or b"{}"))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def listen_for_webhooks():
    port = os.environ.get("MERCHANT_WEBHOOK_PORT")
    if port:
        server = http.server.HTTPServer(("127.0.0.1", int(port)), Hooks)
        threading.Thread(target=server.serve_forever, daemon=True).start()


class Lost(Exception):
    """No answer, or a 5xx other than 503: the outcome is unknown."""


def post(base, path, key, body):
    data = b"" if body is None else json.dumps(body).encode()
    req = urllib.request.Request(base + path, data=data, method="POST")
    req.add_header("Authorization", "Bearer " + API_KEY)
    req.add_header("Content-Type", "application/json")
    req.add_header("Idempotency-Key", key)
    return call(req, TIMEOUT["post"])


def get(base, path):
    req = urllib.request.Request(base + path, method="GET")
    req.add_header("Authorization", "Bearer " + API_KEY)
    return call(req, TIMEOUT["get"])


def call(req, timeout):
    try:
        with urllib.request.urlopen(req, timeout=timeout) as res:
            return res.status, json.loads(res.read() or b"{}")
    except urllib.error.HTTPError as e:
        body = e.read()
        status = e.code
        RETRY_AFTER["s"] = float(e.headers.get("Retry-After") or 1)
        if status >= 500 and status != 503:
            raise Lost(status)
        return status, json.loads(body or b"{}")
    except (urllib.error.URLError, ConnectionError, TimeoutError) as e:
        raise Lost(str(e))


class Shop:
    def __init__(self, base, mistake):
        self.base = base
        self.mistake = mistake
        self.db = sqlite3.connect(":memory:")
        self.db.execute(
            "CREATE TABLE orders (no TEXT PRIMARY KEY, amount INTEGER, state TEXT,"
            " payment_id TEXT, create_key TEXT, confirm_key TEXT, confirms INTEGER,"
            " cart TEXT, version INTEGER)"
        )
        self.db.execute("CREATE TABLE fulfilments (no TEXT, payment_id TEXT)")
        self.trail = []

    def order(self, no, amount, cart):
        # The key is derived from the business and persisted before it is sent.
        key = "payment.create:%s:1" % no
        self.db.execute(
            "INSERT INTO orders VALUES (?, ?, 'pending', NULL, ?, NULL, 0, ?, NULL)",
            (no, amount, key, cart),
        )
        self.db.commit()
        return key

    def cart(self, no):
        return self.db.execute("SELECT cart FROM orders WHERE no = ?", (no,)).fetchone()[0]

    def fulfil(self, no, pid):
        done = self.db.execute(
            "SELECT 1 FROM fulfilments WHERE no = ? AND payment_id = ?", (no, pid)
        ).fetchone()
        if done is None or self.mistake == "fulfil_every_success":
            self.db.execute("INSERT INTO fulfilments VALUES (?, ?)", (no, pid))
            self.db.commit()

    def journal(self):
        """The journal: what only this database knows, as JSON lines."""
        lines = []
        shown = {"paid": "paid", "failed": "failed", "canceled": "canceled", "pending": "pending"}
        for no, state, pid, cart, version in self.db.execute(
            "SELECT no, state, payment_id, cart, version FROM orders ORDER BY rowid"
        ):
            line = {"order": no, "state": shown[state]}
            if pid is not None:
                line.update(payment=pid, version=version)
            lines.append(line)
            lines.append({"order": no, "cart": cart})
        for no, pid in self.db.execute("SELECT no, payment_id FROM fulfilments ORDER BY rowid"):
            lines.append({"order": no, "fulfilled": pid})
        body = "".join(json.dumps(l) + "\n" for l in lines).encode()
        req = urllib.request.Request(self.base + "/__sandbox/journal", data=body, method="POST")
        req.add_header("Content-Type", "application/x-ndjson")
        with urllib.request.urlopen(req, timeout=30) as res:
            return res.status

    def set(self, no, **cols):
        for k, v in cols.items():
            self.db.execute("UPDATE orders SET %s = ? WHERE no = ?" % k, (v, no))
        self.db.commit()

    def row(self, no):
        return self.db.execute(
            "SELECT amount, state, payment_id, create_key, confirm_key, confirms FROM orders WHERE no = ?",
            (no,),
        ).fetchone()

    def note(self, status):
        self.trail.append(status)

    # --- creates ---------------------------------------------------------------

    def create(self, no, amount, card):
        key = self.row(no)[3]
        body = {"merchant_order_no": no, "amount": amount, "currency": "USD"}
        if card:
            body["card"] = card
        for n in range(5):
            try:
                status, p = post(self.base, "/v1/payments", key, body)
            except Lost:
                self.note("lost")
                if self.mistake == "renumber_after_lost_create":
                    return self.pay(no + "-retry", amount, card, self.cart(no))
                if self.mistake == "new_key_after_lost_create":
                    key = "payment.create:%s:retry%d" % (no, n)
                time.sleep(0.05)
                continue
            self.note(status)
            if status in (429, 503):
                if self.mistake in ("new_key_after_503", "new_key_after_429"):
                    key = "payment.create:%s:again%d" % (no, n)
                time.sleep(RETRY_AFTER["s"] + 0.1)
                continue
            if status == 409:
                return self.settle(no, self.by_order(no))
            return self.settle(no, p)
        return self.settle(no, self.by_order(no))

    def by_order(self, no):
        for _ in range(3):
            try:
                status, r = get(self.base, "/v1/payments?merchant_order_no=" + no)
                self.note(status)
                data = r.get("data") or []
                return data[0] if data else None
            except Lost:
                time.sleep(0.05)
        return None

    def settle(self, no, p):
        if p is None or "id" not in p:
            return no
        self.set(no, payment_id=p["id"], version=p.get("version"))
        status, resolution = p.get("status"), p.get("resolution_status")
        wrong = ("manual_review_as_failed", "failed_on_manual_review")
        if resolution == "manual_review" and self.mistake not in wrong:
            self.set(no, state="pending")
        elif status == "succeeded":
            self.set(no, state="paid")
            self.fulfil(no, p["id"])
        elif status == "failed" or resolution == "manual_review":
            self.set(no, state="failed")
        elif status in ("canceled", "expired"):
            self.set(no, state="canceled")
        else:
            self.set(no, state="pending")
        return no

    def pay(self, no, amount, card, cart):
        self.order(no, amount, cart)
        return self.create(no, amount, card)

    # --- confirms --------------------------------------------------------------

    def confirm(self, no, card):
        amount, state, pid, _, key, confirms = self.row(no)
        if key is None or state == "failed":
            confirms += 1
            key = "payment.confirm:%s:%d" % (no, confirms)
            if self.mistake == "card_retry_same_key" and confirms > 1:
                key = "payment.confirm:%s:%d" % (no, confirms - 1)
            self.set(no, confirm_key=key, confirms=confirms)
        for n in range(5):
            try:
                status, p = post(self.base, "/v1/payments/%s/confirm" % pid, key, {"card": card})
            except Lost:
                self.note("lost")
                if self.mistake == "renumber_after_lost_confirm":
                    return self.pay(no + "-retry", amount, card, self.cart(no))
                if self.mistake == "new_confirm_key_after_lost_confirm":
                    key = "payment.confirm:%s:retry%d" % (no, n)
                time.sleep(0.05)
                continue
            self.note(status)
            if status in (429, 503):
                time.sleep(RETRY_AFTER["s"] + 0.1)
                continue
            if status == 409:
                return self.settle(no, self.query(pid))
            return self.settle(no, p)
        return self.settle(no, self.query(pid))

    def query(self, pid):
        try:
            status, p = get(self.base, "/v1/payments/" + pid)
            self.note(status)
            return p if status == 200 else None
        except Lost:
            return None

    def state(self, no):
        return self.row(no)[1]

    # --- webhooks --------------------------------------------------------------

    def await_webhook(self, no, seconds):
        """Applies the webhooks of the order's Payment as they come, until one shows it
        final or `seconds` pass."""
        deadline = time.monotonic() + seconds
        while self.state(no) == "pending" and time.monotonic() < deadline:
            try:
                event = WEBHOOKS.get(timeout=0.1)
            except queue.Empty:
                continue
            p = event.get("object") or {}
            if p.get("id") == self.row(no)[2]:
                self.settle(no, p)


def main():
    base, flow = sys.argv[1], sys.argv[2]
    mistake = sys.argv[3] if len(sys.argv) > 3 else None
    if mistake is not None and mistake not in MISTAKES:
        print(json.dumps({"error": "no such mistake: " + mistake}))
        sys.exit(2)
    if mistake == "short_timeout":
        TIMEOUT["post"] = 5
    listen_for_webhooks()
    shop = Shop(base, mistake)
    no, cart = "ORDER-1", "CART-1"
    if flow == "pay":
        no = shop.pay(no, 100, "A", cart)
    elif flow == "pay_and_reconcile":
        shop.pay(no, 100, "A", cart)
        pid = shop.row(no)[2]
        shop.settle(no, shop.query(pid))
    elif flow == "slow_and_query":
        # A 202 starts the query schedule; it ends at the first final status shown.
        shop.pay(no, 100, "D", cart)
        pid = shop.row(no)[2]
        for _ in range(6):
            if shop.state(no) != "pending":
                break
            post(shop.base, "/__sandbox/clock/advance", "-", {"by": "10s"})
            shop.settle(no, shop.query(pid))
        if mistake == "queries_after_final":
            post(shop.base, "/__sandbox/clock/advance", "-", {"by": "10s"})
            shop.settle(no, shop.query(pid))
    elif flow == "pay_then_confirm":
        shop.pay(no, 100, None, cart)
        no = shop.confirm(no, "A")
    elif flow == "card_retry":
        shop.pay(no, 100, None, cart)
        shop.confirm(no, "B")
        if shop.state(no) == "failed":
            shop.confirm(no, "A")
    elif flow == "processing":
        shop.pay(no, 100, "D", cart)
        pid = shop.row(no)[2]
        if mistake == "confirm_while_processing" and shop.state(no) == "pending":
            shop.set(no, confirm_key="payment.confirm:%s:1" % no, confirms=1)
            shop.confirm(no, "A")
        elif mistake == "queries_too_soon":
            for _ in range(3):
                shop.query(pid)
                time.sleep(1)
    elif flow == "webhook":
        shop.pay(no, 100, "D", cart)
        pid = shop.row(no)[2]
        shop.await_webhook(no, 10)
        # The next query of the schedule would be due 10 s on; the webhook ended it.
        time.sleep(0.3)
        post(shop.base, "/__sandbox/clock/advance", "-", {"by": "10s"})
        if shop.state(no) == "pending" or mistake == "queries_after_webhook":
            shop.settle(no, shop.query(pid))
    elif flow == "cancel":
        shop.pay(no, 100, "G", cart)
        pid = shop.row(no)[2]
        status, p = post(shop.base, "/v1/payments/%s/cancel" % pid, "payment.cancel:%s:1" % no, None)
        shop.note(status)
        if status == 202 and mistake == "cancel_202_as_canceled":
            shop.set(no, state="canceled")
            no = shop.pay(no + "-again", 100, "A", cart)
    elif flow == "manual_review":
        shop.pay(no, 100, "E", cart)
        pid = shop.row(no)[2]
        post(shop.base, "/__sandbox/clock/advance", "-", {"by": "2h"})
        shop.settle(no, shop.query(pid))
        if shop.state(no) == "failed" and mistake == "manual_review_as_failed":
            no = shop.pay(no + "-again", 100, "A", cart)
    elif flow == "refund":
        shop.pay(no, 100, "A", cart)
        pid = shop.row(no)[2]
        number, key = "REFUND-1", "refund.create:REFUND-1:1"
        body = {"payment_id": pid, "merchant_refund_no": number, "amount": 30}
        for n in range(5):
            try:
                status, r = post(shop.base, "/v1/refunds", key, body)
                shop.note(status)
                break
            except Lost:
                shop.note("lost")
                if mistake == "renumber_lost_refund":
                    number = "REFUND-1-again%d" % n
                    key = "refund.create:%s:1" % number
                    body = dict(body, merchant_refund_no=number)
                time.sleep(0.05)
    else:
        print(json.dumps({"error": "no such flow: " + flow}))
        sys.exit(2)
    shop.journal()
    print(json.dumps({"order": no, "state": shop.state(no), "trail": shop.trail}))


if __name__ == "__main__":
    main()
