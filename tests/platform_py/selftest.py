#!/usr/bin/env python3
"""Self-test of the platform over HTTP: the contract's scenarios S1-S13 and the
rules around them on the clean platform, then one probe per planted defect
showing that the defect changes an answer.

    python3 selftest.py [-v]
"""
import json
import os
import subprocess
import sys
import threading
import unittest

from probes import DEFECTS
from rig import CLEAN_ARGS, DAY, HERE, Platform, concurrently, fresh, utf8_as_header


class Clean(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.p = Platform(*CLEAN_ARGS)

    @classmethod
    def tearDownClass(cls):
        cls.p.stop()

    def setUp(self):
        self.assertEqual(self.p.admin("POST", "/_admin/reset", {})[0], 200)

    # ----------------------------------------------------------- S1 - S13

    def test_s1_timeout_retry_same_key_returns_same_payment(self):
        o, k = fresh("O"), fresh("K")
        s1, b1, _ = self.p.create(k, o)
        s2, b2, _ = self.p.create(k, o)
        self.assertEqual((s1, s2), (201, 200))
        self.assertEqual(b1["id"], b2["id"])
        self.assertEqual(b2["status"], "succeeded")
        self.assertEqual(b1["version"], b2["version"])
        self.assertEqual(len(self.p.authorizations()), 1)

    def test_s2_5xx_then_same_key_returns_original_object(self):
        o, k = fresh("O"), fresh("K")
        s1, b1, _ = self.p.create(k, o, card="tok_upstream_500")
        self.assertEqual(s1, 500)
        self.assertEqual(b1["error"]["code"], "internal_error")
        self.assertIs(b1["error"]["retryable"], True)
        s2, b2, _ = self.p.create(k, o, card="tok_upstream_500")
        self.assertEqual(s2, 200)
        self.assertEqual((b2["status"], b2["resolution_status"]), ("processing", "needs_query"))
        [found] = self.p.by_order(o)
        self.assertEqual(found["id"], b2["id"])
        self.p.advance(61)
        s3, b3, _ = self.p.get(f"/v1/payments/{b2['id']}")
        self.assertEqual(b3["status"], "failed")
        self.assertGreater(b3["version"], b2["version"])
        self.assertEqual(len(self.p.authorizations()), 1)

    def test_s3_same_key_other_amount_or_currency_conflicts(self):
        o, k = fresh("O"), fresh("K")
        s1, b1, _ = self.p.create(k, o, amount=10000)
        s2, b2, _ = self.p.create(k, o, amount=12000)
        s3, b3, _ = self.p.create(k, o, currency="EUR")
        self.assertEqual((s1, s2, s3), (201, 409, 409))
        self.assertEqual(b2["error"]["code"], "idempotency_conflict")
        self.assertEqual(b3["error"]["code"], "idempotency_conflict")
        self.assertEqual(self.p.get(f"/v1/payments/{b1['id']}")[1]["amount"], 10000)

    def test_s4_new_key_same_order_no_conflicts_with_related_id(self):
        o = fresh("O")
        s1, b1, _ = self.p.create(fresh("K"), o)
        s2, b2, _ = self.p.create(fresh("K"), o)
        self.assertEqual((s1, s2), (201, 409))
        self.assertEqual(b2["error"]["code"], "order_no_conflict")
        self.assertEqual(b2["error"]["related_resource_id"], b1["id"])
        self.assertEqual(len(self.p.by_order(o)), 1)

    def test_s5_concurrent_same_key_executes_once(self):
        o, k = fresh("O"), fresh("K")
        (s1, b1, _), (s2, b2, _) = concurrently(lambda: self.p.create(k, o),
                                                lambda: self.p.create(k, o))
        self.assertEqual(sorted([s1, s2]), [200, 201])
        self.assertEqual(b1["id"], b2["id"])
        self.assertEqual(len(self.p.authorizations()), 1)

    def test_s5_wait_timeout_answers_operation_in_progress(self):
        p = Platform("--upstream-latency-ms", "800", "--inflight-wait-ms", "100")
        try:
            o, k = fresh("O"), fresh("K")
            results = concurrently(lambda: p.create(k, o), lambda: p.create(k, o))
            statuses = sorted(r[0] for r in results)
            self.assertEqual(statuses, [201, 409])
            conflict = [r[1] for r in results if r[0] == 409][0]
            self.assertEqual(conflict["error"]["code"], "operation_in_progress")
            self.assertEqual(p.create(k, o)[0], 200)
            self.assertEqual(len(p.authorizations()), 1)
        finally:
            p.stop()

    def test_s6_ten_sequential_replays_one_payment_one_charge(self):
        o, k = fresh("O"), fresh("K")
        answers = [self.p.create(k, o) for _ in range(10)]
        self.assertEqual([a[0] for a in answers], [201] + [200] * 9)
        self.assertEqual(len({a[1]["id"] for a in answers}), 1)
        self.assertEqual(len({a[1]["version"] for a in answers}), 1)
        self.assertEqual(len(self.p.authorizations()), 1)
        self.assertEqual(len(self.p.by_order(o)), 1)

    def test_s7_replay_with_new_card_does_not_charge_it(self):
        o, k = fresh("O"), fresh("K")
        s1, b1, _ = self.p.create(k, o, card="tok_decline")
        s2, b2, _ = self.p.create(k, o, card="tok_approve")
        self.assertEqual((s1, s2), (201, 200))
        self.assertEqual(b2["status"], "failed")
        self.assertEqual(b2["attempt_count"], 1)
        self.assertEqual(len(self.p.authorizations()), 1)

    def test_s8_confirm_new_key_while_processing_is_rejected(self):
        o = fresh("O")
        s1, b1, _ = self.p.create(fresh("K"), o, card="tok_approve_slow")
        self.assertEqual((s1, b1["status"]), (202, "processing"))
        s2, b2, _ = self.p.confirm(b1["id"], fresh("K"))
        self.assertEqual(s2, 409)
        self.assertEqual(b2["error"]["code"], "payment_in_progress")
        self.assertEqual(b2["error"]["related_resource_id"], b1["id"])
        # requires_action is unfinished too
        s3, b3, _ = self.p.create(fresh("K"), fresh("O"), card="tok_3ds_cancel_ok")
        self.assertEqual(self.p.confirm(b3["id"], fresh("K"))[1]["error"]["code"], "payment_in_progress")
        self.assertEqual(len(self.p.authorizations()), 2)

    def test_s9_new_card_after_failure_new_attempt_same_payment(self):
        o = fresh("O")
        s1, b1, _ = self.p.create(fresh("K"), o, card="tok_decline")
        self.assertEqual(b1["status"], "failed")
        self.assertEqual(b1["failure"]["code"], "card_declined")
        self.assertEqual(b1["failure"]["attempt_id"], b1["latest_attempt"])
        s2, b2, _ = self.p.confirm(b1["id"], fresh("K"), card="tok_approve")
        self.assertEqual((s2, b2["status"], b2["attempt_count"]), (200, "succeeded", 2))
        self.assertEqual((b2["id"], b2["fee_rate_bps"], b2["amount"]),
                         (b1["id"], b1["fee_rate_bps"], b1["amount"]))

    def test_s10_429_not_executed_then_same_key_creates(self):
        o, k = fresh("O"), fresh("K")
        self.p.admin("PUT", "/_admin/merchants/m1/throttle", {"enabled": True})
        s1, b1, h1 = self.p.create(k, o)
        s1b, _, _ = self.p.create(k, o, api_key="sk_test_m1_2")   # another API key: same limit
        self.assertEqual((s1, s1b), (429, 429))
        self.assertEqual(h1["Retry-After"], "2")
        self.assertEqual(b1["error"]["code"], "rate_limited")
        self.assertEqual(b1["error"]["merchant"], "m1")
        self.assertEqual(self.p.create(fresh("K"), fresh("O"), api_key="sk_test_m2_1")[0], 201)
        self.p.admin("PUT", "/_admin/merchants/m1/throttle", {"enabled": False})
        self.assertEqual(self.p.by_order(o), [])
        self.assertEqual(self.p.create(k, o)[0], 201)

    def test_s11_refund_retry_same_key_same_refund_and_async_settlement(self):
        o = fresh("O")
        pay = self.p.create(fresh("K"), o)[1]
        k, r = fresh("K"), fresh("R")
        body = {"payment_id": pay["id"], "amount": 4000, "merchant_refund_no": r}
        s1, b1, _ = self.p.call("POST", "/v1/refunds", body, key=k)
        s2, b2, _ = self.p.call("POST", "/v1/refunds", body, key=k)
        self.assertEqual((s1, s2), (201, 200))
        self.assertEqual(b1["id"], b2["id"])
        self.assertTrue(b1["id"].startswith("re_"))
        self.assertEqual(b1["status"], "processing")
        [q] = self.p.get(f"/v1/refunds?merchant_refund_no={r}")[1]["data"]
        self.assertEqual(q["id"], b1["id"])
        self.assertEqual(self.p.get("/v1/refunds?status=processing")[1]["data"][0]["id"], b1["id"])
        # the refund number stays unique under another key
        s3, b3, _ = self.p.call("POST", "/v1/refunds", body, key=fresh("K"))
        self.assertEqual((s3, b3["error"]["related_resource_id"]), (409, b1["id"]))
        # beyond what is left to refund
        over = {"payment_id": pay["id"], "amount": 6001, "merchant_refund_no": fresh("R")}
        self.assertEqual(self.p.call("POST", "/v1/refunds", over, key=fresh("K"))[0], 422)
        self.p.advance(61)
        s4, b4, _ = self.p.get(f"/v1/refunds/{b1['id']}")
        self.assertEqual(b4["status"], "succeeded")
        self.assertGreater(b4["version"], b1["version"])
        p2 = self.p.get(f"/v1/payments/{pay['id']}")[1]
        self.assertEqual(p2["amount_refunded"], 4000)
        self.assertGreater(p2["version"], pay["version"])

    def test_s12_cancel_unconfirmed_answers_202_keeps_status(self):
        s0, b0, _ = self.p.create(fresh("K"), fresh("O"), card="tok_3ds_cancel_unconfirmed")
        self.assertEqual((s0, b0["status"]), (201, "requires_action"))
        self.assertIsNotNone(b0["next_action"])
        k = fresh("K")
        s1, b1, _ = self.p.cancel(b0["id"], k)
        self.assertEqual((s1, b1["status"]), (202, "requires_action"))
        self.assertEqual(self.p.get(f"/v1/payments/{b0['id']}")[1]["status"], "requires_action")
        self.p.advance(31)
        b2 = self.p.get(f"/v1/payments/{b0['id']}")[1]
        self.assertEqual(b2["status"], "canceled")
        self.assertGreater(b2["version"], b1["version"])
        self.assertEqual(self.p.cancel(b0["id"], k)[0:2], (200, b2))
        # a cancel the acquirer confirms at once
        b3 = self.p.create(fresh("K"), fresh("O"), card="tok_3ds_cancel_ok")[1]
        s4, b4, _ = self.p.cancel(b3["id"], fresh("K"))
        self.assertEqual((s4, b4["status"]), (200, "canceled"))
        # the race: 202, then the charge succeeds after all
        b5 = self.p.create(fresh("K"), fresh("O"), card="tok_3ds_cancel_race")[1]
        self.assertEqual(self.p.cancel(b5["id"], fresh("K"))[0:2][0], 202)
        self.p.advance(31)
        self.assertEqual(self.p.get(f"/v1/payments/{b5['id']}")[1]["status"], "succeeded")

    def test_s13_503_not_accepted_then_same_key_creates(self):
        o, k = fresh("O"), fresh("K")
        self.p.admin("POST", "/_admin/maintenance", {"on": True})
        s1, b1, _ = self.p.create(k, o)
        self.assertEqual(s1, 503)
        self.assertEqual(b1["error"]["code"], "temporarily_unavailable")
        self.assertIs(b1["error"]["retryable"], True)
        self.assertEqual(self.p.by_order(o), [])
        self.assertEqual(self.p.authorizations(), [])
        self.p.admin("POST", "/_admin/maintenance", {"on": False})
        self.assertEqual(self.p.create(k, o)[0], 201)

    # ------------------------------------------------------- other rules

    def test_key_scope_environment_merchant_endpoint_rotation(self):
        k, o = fresh("K"), fresh("O")
        s1, b1, _ = self.p.create(k, o)
        s2, b2, _ = self.p.create(k, o, api_key="sk_live_m1_1")
        s3, b3, _ = self.p.create(k, o, api_key="sk_test_m2_1")
        s4, b4, _ = self.p.create(k, o, api_key="sk_test_m1_2")     # rotation
        self.assertEqual((s1, s2, s3, s4), (201, 201, 201, 200))
        self.assertEqual(len({b1["id"], b2["id"], b3["id"]}), 3)
        self.assertEqual(b4["id"], b1["id"])
        self.assertIs(b2["livemode"], True)
        # other environment and merchant cannot see the object
        self.assertEqual(self.p.get(f"/v1/payments/{b1['id']}", api_key="sk_live_m1_1")[0], 404)
        # the same key on another endpoint is another scope
        s5, b5, _ = self.p.call("POST", "/v1/refunds", {"payment_id": b1["id"], "amount": 1,
                                                        "merchant_refund_no": fresh("R")}, key=k)
        self.assertEqual(s5, 201)

    def test_key_length_and_charset(self):
        self.assertEqual(self.p.create(None, fresh("O"))[1]["error"]["field"], "Idempotency-Key")
        s, b, _ = self.p.create("x" * 256, fresh("O"))
        self.assertEqual((s, b["error"]["field"]), (400, "Idempotency-Key"))
        self.assertEqual(self.p.create("y" * 255, fresh("O"))[0], 201)
        self.assertEqual(self.p.create(utf8_as_header("é" * 200), fresh("O"))[0], 201)
        self.assertEqual(self.p.create(utf8_as_header("é" * 256), fresh("O"))[0], 400)
        self.assertEqual(self.p.create("a\tb", fresh("O"))[0], 400)

    def test_auth_and_read_only(self):
        self.assertEqual(self.p.create(fresh("K"), fresh("O"), api_key="sk_nope")[0], 401)
        self.assertEqual(self.p.create(fresh("K"), fresh("O"), api_key=None)[0], 401)
        k, o = fresh("K"), fresh("O")
        s, b, _ = self.p.create(k, o, api_key="rk_test_m1_1")
        self.assertEqual(s, 403)
        self.assertEqual(self.p.create(k, o)[0], 201)      # the 403 did not use up the key
        self.assertEqual(len(self.p.by_order(o, api_key="rk_test_m1_1")), 1)

    def test_rejections_do_not_use_up_the_key(self):
        k, o = fresh("K"), fresh("O")
        s1, b1, _ = self.p.create(k, o, currency="XYZ")
        self.assertEqual((s1, b1["error"]["code"], b1["error"]["field"]), (422, "unsupported_currency", "currency"))
        self.assertEqual(self.p.create(k, o, amount=0)[0], 400)
        self.assertEqual(self.p.create(k, o)[0], 201)

    def test_retention_key_expires_order_number_stays_unique(self):
        k, o = fresh("K"), fresh("O")
        pay = self.p.create(k, o)[1]
        self.p.advance(6 * DAY)
        self.assertEqual(self.p.create(k, o)[0], 200)
        self.p.advance(2 * DAY)
        s1, b1, _ = self.p.create(fresh("K"), o)
        s2, b2, _ = self.p.create(k, o)
        self.assertEqual((s1, s2), (409, 409))
        self.assertEqual(b1["error"]["related_resource_id"], pay["id"])
        self.assertEqual(len(self.p.by_order(o)), 1)
        # a key past retention is free again: other parameters are new business
        self.assertEqual(self.p.create(k, fresh("O"))[0], 201)

    def test_query_by_order_number_is_case_sensitive(self):
        o = fresh("Order-Mixed")
        self.p.create(fresh("K"), o)
        self.assertEqual(len(self.p.by_order(o)), 1)
        self.assertEqual(self.p.by_order(o.upper()), [])
        self.assertEqual(self.p.by_order(o.lower()), [])

    def test_cancel_while_the_charge_is_in_flight(self):
        p = Platform("--upstream-latency-ms", "500")
        try:
            k, o = fresh("K"), fresh("O")
            def cancel_when_visible():
                import time
                for _ in range(40):
                    found = p.by_order(o)
                    if found:
                        return p.cancel(found[0]["id"], fresh("K"))
                    time.sleep(0.02)
            created, cancel = concurrently(lambda: p.create(k, o), cancel_when_visible)
            self.assertEqual((cancel[0], cancel[1]["status"]), (202, "processing"))
            self.assertEqual(created[1]["status"], "canceled")
        finally:
            p.stop()

    def test_refund_number_query_is_exact(self):
        pay = self.p.create(fresh("K"), fresh("O"))[1]
        r = fresh("Refund-Mixed")
        self.p.call("POST", "/v1/refunds", {"payment_id": pay["id"], "amount": 10,
                                            "merchant_refund_no": r}, key=fresh("K"))
        self.assertEqual(len(self.p.get(f"/v1/refunds?merchant_refund_no={r}")[1]["data"]), 1)
        self.assertEqual(self.p.get(f"/v1/refunds?merchant_refund_no={r.upper()}")[1]["data"], [])

    def test_ids_follow_the_seed(self):
        a, b = Platform("--seed", "1"), Platform("--seed", "2")
        try:
            ia = a.create("k", "O-SEED")[1]["id"]
            ib = b.create("k", "O-SEED")[1]["id"]
            self.assertRegex(ia, r"^pay_[0-9a-f]{20}$")
            self.assertNotEqual(ia, ib)
            a.admin("POST", "/_admin/reset", {})
            self.assertNotEqual(a.create("k", "O-SEED")[1]["id"], ia)   # ids never repeat
        finally:
            a.stop()
            b.stop()

    def test_clock_control_validation(self):
        self.assertEqual(self.p.admin("POST", "/_admin/clock/advance", {"seconds": -1})[0], 400)
        self.assertEqual(self.p.admin("POST", "/_admin/clock/advance", {"seconds": "5"})[0], 400)
        self.assertEqual(self.p.call("POST", "/_admin/clock/advance", api_key=None,
                                     raw=b'{"seconds": 1e400}')[0], 400)
        self.assertEqual(self.p.admin("PUT", "/_admin/merchants/m9/throttle", {"enabled": True})[0], 404)
        self.assertEqual(self.p.admin("POST", "/_admin/maintenance", {"on": "yes"})[0], 400)

    def test_attempt_limit_three(self):
        pay = self.p.create(fresh("K"), fresh("O"), card="tok_decline")[1]
        for _ in range(2):
            self.assertEqual(self.p.confirm(pay["id"], fresh("K"), card="tok_decline")[1]["attempt_count"], 3 if _ else 2)
        s, b, _ = self.p.confirm(pay["id"], fresh("K"))
        self.assertEqual((s, b["error"]["code"]), (409, "attempt_limit_reached"))

    def test_expiry_limits_new_attempts_not_processing_ones(self):
        pay = self.p.create(fresh("K"), fresh("O"), card="tok_decline")[1]
        slow = self.p.create(fresh("K"), fresh("O"), card="tok_approve_slow")[1]
        self.p.advance(3601)
        self.assertEqual(self.p.get(f"/v1/payments/{pay['id']}")[1]["status"], "expired")
        self.assertEqual(self.p.confirm(pay["id"], fresh("K"))[1]["error"]["code"], "payment_expired")
        self.assertEqual(self.p.get(f"/v1/payments/{slow['id']}")[1]["status"], "succeeded")

    def test_slow_cards_and_silent_card(self):
        a = self.p.create(fresh("K"), fresh("O"), card="tok_approve_slow")
        d = self.p.create(fresh("K"), fresh("O"), card="tok_decline_slow")
        s = self.p.create(fresh("K"), fresh("O"), card="tok_silent")
        self.assertEqual([x[0] for x in (a, d, s)], [202, 202, 202])
        self.assertEqual(s[1]["resolution_status"], "needs_query")
        self.p.advance(21)
        self.assertEqual(self.p.get(f"/v1/payments/{a[1]['id']}")[1]["status"], "succeeded")
        dd = self.p.get(f"/v1/payments/{d[1]['id']}")[1]
        self.assertEqual((dd["status"], dd["failure"]["code"]), ("failed", "card_declined"))
        self.assertEqual(self.p.get(f"/v1/payments/{s[1]['id']}")[1]["status"], "processing")
        self.p.advance(DAY)
        ss = self.p.get(f"/v1/payments/{s[1]['id']}")[1]
        self.assertEqual((ss["status"], ss["resolution_status"]), ("processing", "manual_review"))

    def test_checkout_sessions_share_the_payment(self):
        o, k = fresh("O"), fresh("K")
        body = {"amount": 5000, "currency": "EUR", "merchant_order_no": o}
        s1, c1, _ = self.p.call("POST", "/v1/checkout/sessions", body, key=k)
        s2, c2, _ = self.p.call("POST", "/v1/checkout/sessions", body, key=k)
        s3, c3, _ = self.p.call("POST", "/v1/checkout/sessions", body, key=fresh("K"))
        s4, c4, _ = self.p.call("POST", "/v1/checkout/sessions", {**body, "amount": 5001}, key=fresh("K"))
        s5, c5, _ = self.p.call("POST", "/v1/checkout/sessions", {**body, "amount": 5001}, key=k)
        self.assertEqual((s1, s2, s3, s4, s5), (201, 200, 201, 409, 409))
        self.assertEqual(c1["id"], c2["id"])
        self.assertNotEqual(c1["id"], c3["id"])
        self.assertEqual(c1["payment_id"], c3["payment_id"])
        self.assertEqual(c4["error"]["code"], "order_no_conflict")
        self.assertEqual(c5["error"]["code"], "idempotency_conflict")
        self.assertEqual(len(self.p.by_order(o)), 1)
        self.p.advance(1801)
        self.assertEqual(self.p.get(f"/v1/checkout/sessions/{c1['id']}")[1]["status"], "expired")

    def test_bad_input_never_crashes(self):
        s, b, _ = self.p.call("POST", "/v1/payments", key=fresh("K"), raw=b'{"amount":')
        self.assertEqual((s, b["error"]["code"]), (400, "malformed_json"))
        s, b, _ = self.p.call("POST", "/v1/payments", key=fresh("K"), raw=b"\xff\xfe")
        self.assertEqual(s, 400)
        s, b, _ = self.p.call("POST", "/v1/payments", key=fresh("K"), raw=b"[1,2]")
        self.assertEqual(s, 400)
        s, b, _ = self.p.call("POST", "/v1/payments", key=fresh("K"), raw=b"[" * 100000)
        self.assertEqual((s, b["error"]["code"]), (400, "malformed_json"))
        s, b, _ = self.p.create(fresh("K"), fresh("O"), amount="100")
        self.assertEqual((s, b["error"]["field"]), (400, "amount"))
        self.assertEqual(self.p.get("/v1/nothing")[0], 404)
        self.assertEqual(self.p.get("/v1/payments/pay_missing")[0], 404)
        self.assertEqual(self.p.call("DELETE", "/v1/payments")[0], 405)
        s, b, _ = self.p.confirm("pay_x", fresh("K"), amount=5)
        self.assertEqual((s, b["error"]["field"]), (400, "amount"))
        self.assertEqual(self.p.create(fresh("K"), fresh("O"), card="4242424242424242")[0], 400)

    def test_events_carry_each_visible_change_with_its_version(self):
        pay = self.p.create(fresh("K"), fresh("O"), card="tok_3ds_cancel_unconfirmed")[1]
        self.p.cancel(pay["id"], fresh("K"))
        self.p.advance(31)
        events = [e for e in self.p.get("/_admin/events", api_key=None)[1]["events"]
                  if e["data"]["object"]["id"] == pay["id"]]
        self.assertEqual([e["type"] for e in events], ["payment.requires_action", "payment.canceled"])
        versions = [e["data"]["object"]["version"] for e in events]
        self.assertEqual(versions, sorted(set(versions)))

    def test_webhook_delivery(self):
        import http.server
        got = []

        class Sink(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                got.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *a):
                pass
        sink = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Sink)
        threading.Thread(target=sink.serve_forever, daemon=True).start()
        p = Platform("--webhook-url", f"http://127.0.0.1:{sink.server_address[1]}/hook")
        try:
            pay = p.create(fresh("K"), fresh("O"))[1]
            for _ in range(50):
                if got:
                    break
                import time
                time.sleep(0.05)
            self.assertEqual(got[0]["type"], "payment.succeeded")
            self.assertEqual(got[0]["data"]["object"]["id"], pay["id"])
        finally:
            p.stop()
            sink.shutdown()
            sink.server_close()

    def test_har_is_valid_after_each_exchange(self):
        import tempfile
        path = os.path.join(tempfile.mkdtemp(), "x.har")
        p = Platform("--har", path)
        try:
            p.create("k-har", "O-HAR")
            p.create("k-har", "O-HAR")
            with open(path) as f:
                log = json.load(f)["log"]
            self.assertEqual(log["version"], "1.2")
            self.assertEqual(len(log["entries"]), 2)
            e = log["entries"][1]
            self.assertEqual(e["response"]["status"], 200)
            self.assertIn("Idempotency-Key", [h["name"] for h in e["request"]["headers"]])
            self.assertEqual(json.loads(e["request"]["postData"]["text"])["merchant_order_no"], "O-HAR")
            self.assertEqual(json.loads(e["response"]["content"]["text"])["status"], "succeeded")
        finally:
            p.stop()


class Clients(unittest.TestCase):
    """Both scripted clients run to the end and leave valid HAR files."""

    def test_reference_and_dont_clients(self):
        import tempfile
        d = tempfile.mkdtemp()
        p = Platform("--har", os.path.join(d, "platform.har"))
        try:
            for client in ("reference", "dont"):
                r = subprocess.run([sys.executable, os.path.join(HERE, "clients.py"),
                                    "--base", p.base, "--client", client,
                                    "--har", os.path.join(d, f"{client}.har")],
                                   capture_output=True, text=True, timeout=60)
                self.assertEqual(r.returncode, 0, r.stderr)
                with open(os.path.join(d, f"{client}.har")) as f:
                    entries = json.load(f)["log"]["entries"]
                self.assertTrue(any(e.get("_error") for e in entries))   # the client's timeout
            with open(os.path.join(d, "platform.har")) as f:
                statuses = {e["response"]["status"] for e in json.load(f)["log"]["entries"]}
            self.assertTrue({200, 201, 202, 409, 429, 500, 503} <= statuses, statuses)
        finally:
            p.stop()


class Defects(unittest.TestCase):
    """Each planted defect changes an answer of its probe."""

    @classmethod
    def setUpClass(cls):
        cls.clean = Platform(*CLEAN_ARGS)

    @classmethod
    def tearDownClass(cls):
        cls.clean.stop()

    def test_every_defect_has_a_probe(self):
        sys.path.insert(0, HERE)
        from bugs import BUGS
        self.assertEqual(sorted(BUGS), sorted(DEFECTS))
        self.assertGreaterEqual(len(BUGS), 12)

    def test_unknown_defect_is_refused(self):
        r = subprocess.run([sys.executable, os.path.join(HERE, "platform.py"), "--bug", "nope"],
                           capture_output=True, text=True, timeout=10)
        self.assertEqual(r.returncode, 2)
        self.assertIn("unknown bug", r.stderr)


def _defect_test(name, probe, clean_answer, bug_answer):
    def test(self):
        self.clean.admin("POST", "/_admin/reset", {})
        self.assertEqual(probe(self.clean), clean_answer, "clean platform")
        planted = Platform(*CLEAN_ARGS, "--bug", name)
        try:
            self.assertEqual(probe(planted), bug_answer, f"with --bug {name}")
        finally:
            planted.stop()
    return test


for _name, (_probe, _clean, _bug) in DEFECTS.items():
    setattr(Defects, f"test_bug_{_name}", _defect_test(_name, _probe, _clean, _bug))


if __name__ == "__main__":
    unittest.main()
