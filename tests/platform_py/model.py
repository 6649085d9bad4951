"""The platform's business objects and how they are rendered.

Ids are `<prefix>_` + 20 hex characters of sha256(seed:prefix:counter): the
same requests after the same start give the same ids.  `version` counts
internal processing steps as well as visible changes (see README: "Versions"),
so it skips numbers, rises on every visible change and never moves on a
replay or a query.
"""
import hashlib
from dataclasses import dataclass, field

from clock import iso

FEE_RATE_BPS = 290   # the fee rate snapshot taken when a Payment is created


class Ids:
    def __init__(self, seed):
        self.seed = seed
        self.counter = 0

    def new(self, prefix):
        self.counter += 1
        digest = hashlib.sha256(f"{self.seed}:{prefix}:{self.counter}".encode()).hexdigest()
        return f"{prefix}_{digest[:20]}"


@dataclass
class Caller:
    merchant: str
    environment: str          # "test" | "live"
    api_key: str
    read_only: bool = False

    @property
    def livemode(self):
        return self.environment == "live"


@dataclass
class Attempt:
    id: str
    status: str                       # pending | succeeded | failed | requires_action | canceled
    created: float
    cancel_mode: str = None           # the acquirer's word on a cancel (ACTION only)
    failure_code: str = None


@dataclass
class Payment:
    id: str
    merchant: str
    environment: str
    amount: int
    currency: str
    merchant_order_no: str
    created: float
    expires_at: float
    description: str = None
    metadata: dict = None
    status: str = "requires_payment_method"
    resolution_status: str = "known"
    attempts: list = field(default_factory=list)
    failure: dict = None
    next_action: dict = None
    amount_refunded: int = 0
    cancel_pending: bool = False
    fee_rate_bps: int = FEE_RATE_BPS
    revision: int = 1

    def latest_attempt(self):
        return self.attempts[-1] if self.attempts else None

    def render(self):
        latest = self.latest_attempt()
        return {
            "id": self.id,
            "object": "payment",
            "amount": self.amount,
            "amount_refunded": self.amount_refunded,
            "currency": self.currency,
            "merchant_order_no": self.merchant_order_no,
            "status": self.status,
            "resolution_status": self.resolution_status,
            "attempt_count": len(self.attempts),
            "latest_attempt": latest.id if latest else None,
            "failure": dict(self.failure) if self.failure else None,
            "next_action": dict(self.next_action) if self.next_action else None,
            "fee_rate_bps": self.fee_rate_bps,
            "description": self.description,
            "metadata": self.metadata,
            "livemode": self.environment == "live",
            "created": int(self.created),
            "expires_at": iso(self.expires_at),
            "version": self.revision,
        }


@dataclass
class Refund:
    id: str
    merchant: str
    environment: str
    payment_id: str
    amount: int
    currency: str
    merchant_refund_no: str
    created: float
    reason: str = None
    status: str = "processing"
    settled_at: float = None
    revision: int = 1

    def render(self):
        return {
            "id": self.id,
            "object": "refund",
            "payment_id": self.payment_id,
            "amount": self.amount,
            "currency": self.currency,
            "merchant_refund_no": self.merchant_refund_no,
            "status": self.status,
            "reason": self.reason,
            "failure": None,
            "livemode": self.environment == "live",
            "metadata": None,
            "created": int(self.created),
            "settled_at": iso(self.settled_at),
            "version": self.revision,
        }


@dataclass
class CheckoutSession:
    id: str
    merchant: str
    environment: str
    payment_id: str
    amount: int
    currency: str
    merchant_order_no: str
    created: float
    expires_at: float
    success_url: str = None
    status: str = "open"              # open | complete | expired
    revision: int = 1

    def render(self):
        return {
            "id": self.id,
            "object": "checkout.session",
            "payment_id": self.payment_id,
            "amount": self.amount,
            "currency": self.currency,
            "merchant_order_no": self.merchant_order_no,
            "status": self.status,
            "url": f"https://checkout.payhub.test/pay/{self.id}",
            "success_url": self.success_url,
            "livemode": self.environment == "live",
            "metadata": None,
            "created": int(self.created),
            "expires_at": iso(self.expires_at),
            "version": self.revision,
        }
