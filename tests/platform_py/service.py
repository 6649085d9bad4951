"""The PayHub endpoints: payments, confirm, cancel, checkout sessions, refunds, queries.

Every request runs under one condition lock, released only while the acquirer
is called (so a second same-key request can meet the first in flight and wait
for it).  Timers (the acquirer's late answers, verification, expiry, refund
settlement) are kept in a heap on the platform clock and run, in due order,
before each request and after each clock move.
"""
import copy
import heapq
import threading
import time

import acquirer as acq
from idem import Keys, RUNNING
from events import Events
from model import Ids, Payment, Attempt, Refund, CheckoutSession
from readings import Readings
from validation import (ApiError, invalid, _object, _text, _amount, _currency,
                        CURRENCIES)

PAYMENT_TTL = 3600            # expires_at = created + 1 h
SESSION_TTL = 1800            # a checkout session is open 30 min
REFUND_SETTLE_AFTER = 60      # a refund is processing, then succeeded 60 s later
VERIFY_AFTER = 60             # after an upstream 5xx, verification finds no charge
MANUAL_REVIEW_AFTER = 24 * 3600   # automatic query window for an unanswered charge

UNFINISHED = ("processing", "requires_action")


class Service:
    def __init__(self, clock, policy, acquirer, seed=0, inflight_wait_s=10.0, webhook_url=None,
                 readings=None, card_objects=False):
        self.clock = clock
        self.card_objects = card_objects
        self.policy = policy
        self.readings = readings or Readings()
        self.acquirer = acquirer
        self.ids = Ids(seed)
        self.events = Events(self.ids, clock, webhook_url)
        self.inflight_wait_s = inflight_wait_s
        self.cond = threading.Condition(threading.RLock())
        self._clear()

    def _clear(self):
        self.keys = Keys()
        self.payments = {}
        self.refunds = {}
        self.sessions = {}
        self.order_index = {}     # (merchant, environment, merchant_order_no) -> payment id
        self.refund_index = {}    # (merchant, environment, merchant_refund_no) -> refund id
        self.timers = []
        self.timer_seq = 0

    # ------------------------------------------------------------- controls

    def reset(self):
        with self.cond:
            self.clock.reset()
            self.acquirer.reset()
            self.events.reset()
            self._clear()
            self.cond.notify_all()

    def advance(self, seconds):
        with self.cond:
            self.clock.advance(seconds)
            self._tick()
            return self.clock.now()

    def publish(self):
        """Emit an event for every object whose rendering changed."""
        with self.cond:
            self.events.observe(list(self.payments.values()) + list(self.refunds.values())
                                + list(self.sessions.values()))

    def event_log(self):
        with self.cond:
            return copy.deepcopy(self.events.log)

    def ledger(self):
        with self.cond:
            return list(self.acquirer.ledger)

    # --------------------------------------------------------------- timers

    def _schedule(self, due, kind, *args):
        self.timer_seq += 1
        heapq.heappush(self.timers, (due, self.timer_seq, kind, args))

    def _tick(self):
        now = self.clock.now()
        for record in self.keys.expire(now):
            if (self.policy.order_index_expires_with_key and record.endpoint == "payment.create"
                    and record.kind == "payment"):
                p = self.payments.get(record.object_id)
                if p:
                    k = (p.merchant, p.environment, p.merchant_order_no)
                    if self.order_index.get(k) == p.id:
                        del self.order_index[k]
        while self.timers and self.timers[0][0] <= now:
            due, _, kind, args = heapq.heappop(self.timers)
            getattr(self, "_on_" + kind)(due, *args)

    def _async_step(self):
        return 2 if self.policy.bump_version_on_async_outcome else 0

    def _current(self, pid, attempt_id, status):
        p = self.payments.get(pid)
        if p is None or p.status != status or p.latest_attempt().id != attempt_id:
            return None
        return p

    def _on_late_answer(self, at, pid, attempt_id, outcome):
        p = self._current(pid, attempt_id, "processing")
        if p is None:
            return
        attempt = p.latest_attempt()
        if p.cancel_pending:
            self._mark_canceled(p)
        elif outcome == acq.APPROVED:
            self._mark_succeeded(p, attempt)
        else:
            self._mark_declined(p, attempt)
        p.revision += self._async_step()

    def _on_verify_no_charge(self, at, pid, attempt_id):
        p = self._current(pid, attempt_id, "processing")
        if p is None:
            return
        attempt = p.latest_attempt()
        if p.cancel_pending:
            self._mark_canceled(p)
        else:
            attempt.status = "failed"
            attempt.failure_code = "processing_error"
            p.status = "failed"
            p.resolution_status = "known"
            p.failure = {"code": "processing_error", "attempt_id": attempt.id,
                         "message": "The acquirer reported no charge for this attempt."}
        p.revision += self._async_step()

    def _on_manual_review(self, at, pid, attempt_id):
        p = self._current(pid, attempt_id, "processing")
        if p is None or p.resolution_status != "needs_query":
            return
        p.resolution_status = "manual_review"
        p.revision += self._async_step()

    def _on_cancel_answer(self, at, pid, attempt_id, result):
        p = self._current(pid, attempt_id, "requires_action")
        if p is None:
            return
        if result == "charged":
            self._mark_succeeded(p, p.latest_attempt())
        else:
            self._mark_canceled(p)
        p.revision += self._async_step()

    def _on_expire_payment(self, at, pid):
        p = self.payments.get(pid)
        if p and p.status in ("requires_payment_method", "failed"):
            p.status = "expired"
            p.next_action = None
            p.revision += 1

    def _on_expire_session(self, at, sid):
        s = self.sessions.get(sid)
        if s and s.status == "open":
            s.status = "expired"
            s.revision += 1

    def _on_settle_refund(self, at, rid):
        r = self.refunds.get(rid)
        if r is None or r.status != "processing":
            return
        r.status = "succeeded"
        r.settled_at = at
        r.revision += 2
        p = self.payments.get(r.payment_id)
        if p:
            p.amount_refunded += r.amount
            p.revision += 1

    # ------------------------------------------------------ state changes

    def _mark_succeeded(self, p, attempt):
        attempt.status = "succeeded"
        p.status = "succeeded"
        p.resolution_status = "known"
        p.failure = None
        p.next_action = None
        for s in self.sessions.values():
            if s.payment_id == p.id and s.status == "open":
                s.status = "complete"
                s.revision += 1

    def _mark_declined(self, p, attempt):
        attempt.status = "failed"
        attempt.failure_code = "card_declined"
        p.status = "failed"
        p.resolution_status = "known"
        p.next_action = None
        p.failure = {"code": "card_declined", "attempt_id": attempt.id,
                     "message": "The card was declined by the issuer."}

    def _mark_canceled(self, p):
        attempt = p.latest_attempt()
        if attempt and attempt.status in ("pending", "requires_action"):
            attempt.status = "canceled"
        p.status = "canceled"
        p.resolution_status = "known"
        p.next_action = None
        p.cancel_pending = False

    def _start_attempt(self, p):
        attempt = Attempt(self.ids.new("att"), "pending", self.clock.now())
        p.attempts.append(attempt)
        p.status = "processing"
        p.resolution_status = "known"
        p.failure = None
        p.next_action = None
        p.revision += 1
        return attempt

    def _apply_answer(self, p, attempt, answer, sync_status):
        """Record the acquirer's answer; return the HTTP status of the answer."""
        now = self.clock.now()
        if p.latest_attempt() is not attempt or p.status != "processing":
            return sync_status
        if p.cancel_pending and answer.kind in (acq.APPROVED, acq.DECLINED, acq.ACTION):
            # A cancel arrived while the charge was in flight: void / close it.
            self._mark_canceled(p)
        elif answer.kind == acq.APPROVED:
            self._mark_succeeded(p, attempt)
        elif answer.kind == acq.DECLINED:
            self._mark_declined(p, attempt)
        elif answer.kind == acq.ACTION:
            attempt.status = "requires_action"
            attempt.cancel_mode = answer.cancel
            p.status = "requires_action"
            p.next_action = {"type": "redirect_to_url",
                             "url": f"https://3ds.acquirer.test/challenge/{attempt.id}"}
        elif answer.kind == acq.LATE:
            self._schedule(attempt.created + acq.LATE_ANSWER_AFTER, "late_answer", p.id, attempt.id,
                           answer.later)
            p.revision += 1
            return 202
        elif answer.kind == acq.SILENT:
            p.resolution_status = "needs_query"
            self._schedule(attempt.created + MANUAL_REVIEW_AFTER, "manual_review", p.id, attempt.id)
            p.revision += 2
            return 202
        elif answer.kind == acq.ERROR:
            p.resolution_status = "needs_query"
            self._schedule(now + VERIFY_AFTER, "verify_no_charge", p.id, attempt.id)
            p.revision += 2
            return 202 if self.readings.unknown_result == "accepted_202" else 500
        p.revision += 2
        return sync_status

    # ------------------------------------------------------ idempotency

    def _begin(self, caller, path, key, endpoint, fingerprint):
        """Claim the key's scope, or find it bound.  Returns (record, is_replay)."""
        scope = self.policy.scope(caller, "POST", path, key)
        deadline = time.monotonic() + self.inflight_wait_s
        while True:
            record = self.keys.find(scope)
            if record is None:
                record = self.keys.claim(scope, fingerprint, self.clock.now(),
                                         register=self.policy.claim_key_atomically)
                record.endpoint = endpoint
                return record, False
            if record.fingerprint != fingerprint:
                raise ApiError(409, "idempotency_conflict",
                               "This Idempotency-Key was used with other safety-relevant parameters.",
                               related=record.object_id)
            if record.state == RUNNING:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not self.cond.wait_for(
                        lambda: record.state != RUNNING, timeout=remaining):
                    raise ApiError(409, "operation_in_progress",
                                   "A request with this Idempotency-Key is still being processed; "
                                   "retry later with the same key.", retryable=True)
                continue
            return record, True

    def _bind(self, record, kind, object_id, status, body):
        self.keys.bind(record, kind, object_id, status, copy.deepcopy(body))
        self.cond.notify_all()
        return status, body

    def _reject(self, record, error):
        if self.policy.rejection_binds_key and error.status in (400, 422):
            self.keys.bind(record, "rejection", None, error.status, error)
        else:
            self.keys.release(record)
        self.cond.notify_all()
        raise error

    def _replay(self, record, obj):
        if record.kind == "rejection":
            raise record.first_body
        if self.policy.replay_cached_response:
            return record.first_status, copy.deepcopy(record.first_body)
        return 200, obj.render()

    def _scoped(self, table, caller, object_id):
        obj = table.get(object_id)
        if obj is None or obj.merchant != caller.merchant or obj.environment != caller.environment:
            return None
        return obj

    def _token(self, body, required):
        token = body.get("payment_method")
        if self.card_objects and token is not None:
            # --card-objects: {"type": "card", "card": {"token": "tok_…"}}, never a string.
            card = token.get("card") if isinstance(token, dict) and token.get("type") == "card" \
                else None
            token = card.get("token") if isinstance(card, dict) else None
            if not isinstance(token, str):
                raise invalid("payment_method",
                              '`payment_method` must be {"type": "card", "card": {"token": …}}.')
        if token is None:
            if required:
                raise invalid("payment_method", "`payment_method` is required.")
            return None
        if not isinstance(token, str) or not self.acquirer.knows(token):
            raise invalid("payment_method", "`payment_method` is not a known payment method token.")
        return token

    def _charge(self, p, attempt, token, sync_status, record, replay):
        """Call the acquirer outside the lock, then record its answer and bind the key."""
        answer = self.acquirer.authorize(attempt.id, p.amount, p.currency, token)
        if answer.kind in (acq.LATE, acq.SILENT) and not self.clock.simulated:
            time.sleep(acq.SYNC_WAIT)    # the synchronous wait, in real time
        with self.cond:
            self._tick()
            status = self._apply_answer(p, attempt, answer, sync_status)
            if status == 500:
                body = ApiError(500, "internal_error", "The acquirer failed; the result is unknown.",
                                retryable=True).body()
            else:
                body = p.render()
            if replay:
                return (200 if status != 500 else 500), body
            return self._bind(record, "payment", p.id, status, body)

    # ------------------------------------------------------------ payments

    def create_payment(self, caller, key, body):
        body = _object(body)
        order_no = _text(body, "merchant_order_no")
        amount = _amount(body)
        currency = _currency(body)
        token = self._token(body, required=False)
        description = _text(body, "description", required=False, max_len=500)
        metadata = body.get("metadata")
        if metadata is not None and not isinstance(metadata, dict):
            raise invalid("metadata", "`metadata` must be an object.")
        fingerprint = self.policy.fingerprint("payment.create", {
            "amount": amount, "currency": currency, "merchant_order_no": order_no})
        with self.cond:
            self._tick()
            record, replay = self._begin(caller, "/v1/payments", key, "payment.create", fingerprint)
            if replay:
                p = self.payments.get(record.object_id)
                if not (self.policy.replay_charges_new_card and token and p is not None
                        and p.status == "failed" and len(p.attempts) < self.policy.max_attempts):
                    return self._replay(record, p)
                attempt = self._start_attempt(p)
            else:
                if currency not in CURRENCIES:
                    self._reject(record, ApiError(422, "unsupported_currency",
                                                  f"Currency {currency} is not supported.",
                                                  field="currency"))
                existing = self.order_index.get((caller.merchant, caller.environment, order_no))
                if existing is not None:
                    self._reject(record, ApiError(409, "order_no_conflict",
                                                  "A Payment already exists for this merchant_order_no.",
                                                  field="merchant_order_no", related=existing))
                now = self.clock.now()
                p = Payment(self.ids.new("pay"), caller.merchant, caller.environment, amount,
                            currency, order_no, now, now + PAYMENT_TTL,
                            description=description, metadata=metadata)
                self.payments[p.id] = p
                self.order_index[(caller.merchant, caller.environment, order_no)] = p.id
                self._schedule(p.expires_at, "expire_payment", p.id)
                if token is None:
                    return self._bind(record, "payment", p.id, 201, p.render())
                attempt = self._start_attempt(p)
        return self._charge(p, attempt, token, 201, record, replay)

    def confirm_payment(self, caller, key, pid, body):
        body = _object(body)
        token = self._token(body, required=True)
        new_amount = None
        if "amount" in body and not self.policy.confirm_accepts_amount \
                and self.readings.unnamed_fields == "ignored":
            body = {k: v for k, v in body.items() if k != "amount"}
        if "amount" in body:
            if not self.policy.confirm_accepts_amount:
                raise invalid("amount", "`amount` cannot be changed on confirm; a new attempt "
                                        "keeps the original Payment.")
            new_amount = _amount(body)
        path = f"/v1/payments/{pid}/confirm"
        fingerprint = self.policy.fingerprint("payment.confirm", {"payment_id": pid})
        with self.cond:
            self._tick()
            record, replay = self._begin(caller, path, key, "payment.confirm", fingerprint)
            p = self._scoped(self.payments, caller, pid)
            if replay:
                if not (self.policy.replay_charges_new_card and p is not None
                        and p.status == "failed" and len(p.attempts) < self.policy.max_attempts):
                    return self._replay(record, p)
            else:
                if p is None:
                    self._reject(record, ApiError(404, "resource_not_found",
                                                  f"No payment {pid}.", field="payment_id"))
                if p.status in UNFINISHED and self.policy.confirm_rejects_in_progress:
                    self._reject(record, ApiError(409, "payment_in_progress",
                                                  "The payment's attempt is unfinished.", related=p.id))
                if p.status == "expired" or self.clock.now() >= p.expires_at:
                    self._reject(record, ApiError(409, "payment_expired",
                                                  "The payment is past expires_at.", related=p.id))
                if p.status in ("succeeded", "canceled"):
                    self._reject(record, ApiError(409, "payment_state_invalid",
                                                  f"A {p.status} payment cannot be confirmed.",
                                                  related=p.id))
                if len(p.attempts) >= self.policy.max_attempts:
                    self._reject(record, ApiError(409, "attempt_limit_reached",
                                                  "The payment has used all its attempts.",
                                                  related=p.id))
                if new_amount is not None and new_amount != p.amount:
                    p.amount = new_amount
                    p.revision += 1
            attempt = self._start_attempt(p)
        return self._charge(p, attempt, token, 200, record, replay)

    def cancel_payment(self, caller, key, pid):
        path = f"/v1/payments/{pid}/cancel"
        fingerprint = self.policy.fingerprint("payment.cancel", {"payment_id": pid})
        with self.cond:
            self._tick()
            record, replay = self._begin(caller, path, key, "payment.cancel", fingerprint)
            p = self._scoped(self.payments, caller, pid)
            if replay:
                return self._replay(record, p)
            if p is None:
                self._reject(record, ApiError(404, "resource_not_found", f"No payment {pid}.",
                                              field="payment_id"))
            if p.status in ("succeeded", "expired"):
                self._reject(record, ApiError(409, "payment_state_invalid",
                                              f"A {p.status} payment cannot be canceled.",
                                              related=p.id))
            if p.status in ("requires_payment_method", "failed"):
                self._mark_canceled(p)
                p.revision += 2
                return self._bind(record, "payment", p.id, 200, p.render())
            if p.status == "canceled":
                return self._bind(record, "payment", p.id, 200, p.render())
            if p.status == "processing" and self.readings.cancel_processing == "payment_in_progress":
                self._reject(record, ApiError(409, "payment_in_progress",
                                              "The payment's attempt is unfinished.", related=p.id))
            attempt = p.latest_attempt()
            if p.status == "requires_action" and attempt.cancel_mode in (None, "confirmed"):
                self._mark_canceled(p)
                p.revision += 2
                return self._bind(record, "payment", p.id, 200, p.render())
            # No confirmation within the synchronous wait: 202, the status kept.
            if p.status == "requires_action":
                result = "charged" if attempt.cancel_mode == "race" else "canceled"
                self._schedule(self.clock.now() + acq.CANCEL_ANSWER_AFTER, "cancel_answer",
                               p.id, attempt.id, result)
            else:
                p.cancel_pending = True
            body = p.render()
            if self.policy.cancel_202_reports_canceled:
                body["status"] = "canceled"
                body["next_action"] = None
            return self._bind(record, "payment", p.id, 202, body)

    def get_payment(self, caller, pid):
        with self.cond:
            self._tick()
            p = self._scoped(self.payments, caller, pid)
            if p is None:
                raise ApiError(404, "resource_not_found", f"No payment {pid}.")
            return 200, p.render()

    def list_payments(self, caller, query):
        order_no = query.get("merchant_order_no")
        status = query.get("status")
        limit = _limit(query)
        with self.cond:
            self._tick()
            found = [p for p in self.payments.values()
                     if p.merchant == caller.merchant and p.environment == caller.environment
                     and (order_no is None or self.policy.order_no_matches(p.merchant_order_no, order_no))
                     and (status is None or p.status == status)]
            return 200, _page("/v1/payments", found, limit)

    # -------------------------------------------------------- checkout sessions

    def create_session(self, caller, key, body):
        body = _object(body)
        order_no = _text(body, "merchant_order_no")
        amount = _amount(body)
        currency = _currency(body)
        success_url = _text(body, "success_url", required=False, max_len=2000)
        fingerprint = self.policy.fingerprint("checkout.create", {
            "amount": amount, "currency": currency, "merchant_order_no": order_no})
        with self.cond:
            self._tick()
            record, replay = self._begin(caller, "/v1/checkout/sessions", key, "checkout.create",
                                         fingerprint)
            if replay:
                return self._replay(record, self.sessions.get(record.object_id))
            if currency not in CURRENCIES:
                self._reject(record, ApiError(422, "unsupported_currency",
                                              f"Currency {currency} is not supported.",
                                              field="currency"))
            now = self.clock.now()
            index_key = (caller.merchant, caller.environment, order_no)
            pid = self.order_index.get(index_key)
            if pid is not None:
                p = self.payments[pid]
                if p.amount != amount or p.currency != currency:
                    self._reject(record, ApiError(409, "order_no_conflict",
                                                  "This merchant_order_no belongs to a Payment with "
                                                  "another amount or currency.",
                                                  field="merchant_order_no", related=pid))
                if p.status in ("succeeded", "canceled", "expired") \
                        and self.readings.closed_payment_session == "refused":
                    self._reject(record, ApiError(409, "payment_state_invalid",
                                                  f"The order's Payment is {p.status}.", related=pid))
            else:
                p = Payment(self.ids.new("pay"), caller.merchant, caller.environment, amount,
                            currency, order_no, now, now + PAYMENT_TTL)
                self.payments[p.id] = p
                self.order_index[index_key] = p.id
                self._schedule(p.expires_at, "expire_payment", p.id)
            s = CheckoutSession(self.ids.new("cs"), caller.merchant, caller.environment, p.id,
                                amount, currency, order_no, now,
                                min(now + SESSION_TTL, p.expires_at), success_url=success_url)
            self.sessions[s.id] = s
            self._schedule(s.expires_at, "expire_session", s.id)
            return self._bind(record, "session", s.id, 201, s.render())

    def get_session(self, caller, sid):
        with self.cond:
            self._tick()
            s = self._scoped(self.sessions, caller, sid)
            if s is None:
                raise ApiError(404, "resource_not_found", f"No checkout session {sid}.")
            return 200, s.render()

    # ------------------------------------------------------------- refunds

    def create_refund(self, caller, key, body):
        body = _object(body)
        pid = _text(body, "payment_id", max_len=100)
        amount = _amount(body)
        refund_no = _text(body, "merchant_refund_no")
        currency = _currency(body, required=False)
        reason = _text(body, "reason", required=False, max_len=500)
        fingerprint = self.policy.fingerprint("refund.create", {
            "payment_id": pid, "amount": amount, "merchant_refund_no": refund_no,
            "currency": currency})
        with self.cond:
            self._tick()
            record, replay = self._begin(caller, "/v1/refunds", key, "refund.create", fingerprint)
            if replay:
                return self._replay(record, self.refunds.get(record.object_id))
            p = self._scoped(self.payments, caller, pid)
            if p is None:
                self._reject(record, ApiError(404, "resource_not_found", f"No payment {pid}.",
                                              field="payment_id"))
            if currency is not None and currency != p.currency:
                self._reject(record, ApiError(422, "currency_mismatch",
                                              "A refund is in the Payment's currency.",
                                              field="currency"))
            index_key = (caller.merchant, caller.environment, refund_no)
            existing = self.refund_index.get(index_key)
            if existing is not None and self.policy.refund_no_unique:
                self._reject(record, ApiError(409, "duplicate_merchant_refund_no",
                                              "A refund already exists for this merchant_refund_no.",
                                              field="merchant_refund_no", related=existing))
            if p.status != "succeeded":
                self._reject(record, ApiError(409, "payment_state_invalid",
                                              f"A {p.status} payment cannot be refunded.",
                                              related=p.id))
            refundable = p.amount - sum(r.amount for r in self.refunds.values()
                                        if r.payment_id == p.id and r.status != "failed")
            if amount > refundable and not self.policy.refund_over_captured:
                self._reject(record, ApiError(422, "refund_amount_exceeds_available",
                                              f"At most {refundable} can still be refunded.",
                                              field="amount", refundable_amount=refundable))
            now = self.clock.now()
            r = Refund(self.ids.new("re"), caller.merchant, caller.environment, p.id, amount,
                       p.currency, refund_no, now, reason=reason)
            r.revision = 2          # accepted, then submitted upstream
            self.refunds[r.id] = r
            self.refund_index.setdefault(index_key, r.id)
            self.acquirer.refund(r.id, p.id, amount)
            self._schedule(now + REFUND_SETTLE_AFTER, "settle_refund", r.id)
            return self._bind(record, "refund", r.id, 201, r.render())

    def get_refund(self, caller, rid):
        with self.cond:
            self._tick()
            r = self._scoped(self.refunds, caller, rid)
            if r is None:
                raise ApiError(404, "resource_not_found", f"No refund {rid}.")
            return 200, r.render()

    def list_refunds(self, caller, query):
        refund_no = query.get("merchant_refund_no")
        status = query.get("status")
        pid = query.get("payment_id")
        limit = _limit(query)
        with self.cond:
            self._tick()
            found = [r for r in self.refunds.values()
                     if r.merchant == caller.merchant and r.environment == caller.environment
                     and (refund_no is None or r.merchant_refund_no == refund_no)
                     and (status is None or r.status == status)
                     and (pid is None or r.payment_id == pid)]
            return 200, _page("/v1/refunds", found, limit)


def _limit(query):
    raw = query.get("limit")
    if raw is None:
        return 10
    if not raw.isdigit() or not (1 <= int(raw) <= 100):
        raise invalid("limit", "`limit` must be an integer from 1 to 100.")
    return int(raw)


def _page(url, objects, limit):
    objects = sorted(objects, key=lambda o: (o.created, o.id), reverse=True)
    return {"object": "list", "url": url, "data": [o.render() for o in objects[:limit]],
            "has_more": len(objects) > limit}
