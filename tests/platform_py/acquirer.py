"""The acquirer behind the platform, driven by test-card tokens.

The token only selects the acquirer's behaviour; the platform keeps the
answer (what happens next), never the token (card information is not
stored).  Delays are on the platform's clock; `latency` is a real sleep per
call, which gives concurrent same-key requests a window to meet in flight.
"""
import threading
import time

# Answer kinds.
APPROVED = "approved"
DECLINED = "declined"
ACTION = "action"          # 3-D Secure: the payer must authenticate
LATE = "late"              # answered after the synchronous wait (~15 s)
SILENT = "silent"          # never answered
ERROR = "error"            # the acquirer fails with a 5xx before charging

# Platform-clock delays (seconds).
SYNC_WAIT = 15              # the platform waits this long synchronously
LATE_ANSWER_AFTER = 20      # a slow card's answer arrives after the sync wait
CANCEL_ANSWER_AFTER = 30    # an unconfirmed cancel's final word


class Answer:
    def __init__(self, kind, later=None, cancel=None):
        self.kind = kind
        self.later = later      # LATE: APPROVED or DECLINED
        self.cancel = cancel    # ACTION: "confirmed" | "unconfirmed" | "race"


CARDS = {
    "tok_approve": lambda: Answer(APPROVED),
    "tok_decline": lambda: Answer(DECLINED),
    "tok_3ds_cancel_ok": lambda: Answer(ACTION, cancel="confirmed"),
    "tok_3ds_cancel_unconfirmed": lambda: Answer(ACTION, cancel="unconfirmed"),
    "tok_3ds_cancel_race": lambda: Answer(ACTION, cancel="race"),
    "tok_approve_slow": lambda: Answer(LATE, later=APPROVED),
    "tok_decline_slow": lambda: Answer(LATE, later=DECLINED),
    "tok_silent": lambda: Answer(SILENT),
    "tok_upstream_500": lambda: Answer(ERROR),
}


class Acquirer:
    def __init__(self, latency_s=0.0):
        self.latency_s = latency_s
        self.initial_latency_s = latency_s
        self._lock = threading.Lock()
        self.ledger = []    # one line per upstream call: what the acquirer saw

    def knows(self, token):
        return token in CARDS

    def authorize(self, attempt_id, amount, currency, token):
        if self.latency_s:
            time.sleep(self.latency_s)
        answer = CARDS[token]()
        with self._lock:
            self.ledger.append({"call": "authorize", "attempt_id": attempt_id,
                                "amount": amount, "currency": currency,
                                "answer": answer.kind})
        return answer

    def refund(self, refund_id, payment_id, amount):
        with self._lock:
            self.ledger.append({"call": "refund", "refund_id": refund_id,
                                "payment_id": payment_id, "amount": amount})

    def reset(self):
        with self._lock:
            self.ledger = []
            self.latency_s = self.initial_latency_s
