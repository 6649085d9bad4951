"""Readings: the places where the contract is silent or ambiguous, one switch each.

The platform takes one reading at each silent point; `--reading POINT=NAME`
(repeatable) takes another.  Each point names the contract sentence that leaves
the choice open (the contract page's section, English translation of
000_400c8c8bbb9bb1ae.txt; the Chinese is authoritative).  The names are the
ones `payhub-verify conform` prints in its report and accepts in a profile's
`readings`.
"""

# point: (default, other readings...)
READINGS = {
    # The endpoint pages list the fields each endpoint takes; what a field they
    # do not list does is not said.
    "unnamed_fields": ("refused", "ignored"),
    # "429 rate_limited: this request was not executed ... Switching Key cannot
    # get around the merchant's overall limit": which requests count is not said.
    "rate_limit_scope": ("every_request", "posts_only"),
    # S12 covers a cancel of requires_action; a cancel of a processing Payment
    # is not described.
    "cancel_processing": ("accepted", "payment_in_progress"),
    # "503 temporarily_unavailable: the platform has suspended new transactions
    # on that channel": which requests are new transactions is not said.
    "pause_scope": ("new_transactions", "creates_only"),
    # "Idempotency-Key, 1-255 characters" (1–255 个字符): no character set.
    "key_charset": ("any_character", "printable_ascii"),
    # No order of checks is given when a throttle or a pause and a refusal of
    # the request itself both apply.  (A paused channel checked before the
    # Payment a confirm names is looked up, conform's `pause_before_lookup`, is
    # what `switch_first` does here: 503 before 404, and conform names it so.)
    "refusal_order": ("switch_first", "refusal_first"),
    # The contract names a few error codes only.
    "unnamed_codes": ("own_codes", "model_codes"),
    # S10 shows Retry-After on a 429; of a 503 it says nothing.
    "retry_after_503": ("absent", "present"),
    # S10 shows `Retry-After: 2`; the reference code reads any `seconds >= 0`
    # and falls back to its own backoff when the header is absent or a date.
    "retry_after_429": ("seconds", "zero", "absent", "http_date"),
    # "A timeout, a 5xx or a 202 may all have charged" (超时、5xx、202 都可能已经
    # 扣款): an upstream failure of unknown effect may be told as either.
    "unknown_result": ("internal_error_500", "accepted_202"),
    # What a new checkout session means for a Payment no longer open is not said.
    "closed_payment_session": ("refused", "new_session"),
}

# The model's names for this platform's own codes (unnamed_codes=model_codes).
MODEL_CODES = {
    "resource_not_found": "resource_missing",
    "route_not_found": "resource_missing",
    "invalid_api_key": "authentication_failed",
    "api_key_read_only": "permission_denied",
    "missing_idempotency_key": "invalid_request",
    "invalid_idempotency_key": "invalid_request",
    "invalid_parameter": "invalid_request",
    "malformed_json": "invalid_request",
    "duplicate_merchant_refund_no": "refund_no_conflict",
    "refund_amount_exceeds_available": "refund_amount_exceeded",
    "attempt_limit_reached": "attempts_exhausted",
}


class Readings:
    """The reading taken at each point: `readings.rate_limit_scope == "posts_only"`."""

    def __init__(self, chosen=()):
        for point, names in READINGS.items():
            setattr(self, point, names[0])
        for item in chosen:
            point, _, name = item.partition("=")
            if point not in READINGS:
                raise ValueError(f"unknown reading point {point!r}; known: "
                                 f"{', '.join(READINGS)}")
            if name not in READINGS[point]:
                raise ValueError(f"{point}: unknown reading {name!r}; known: "
                                 f"{', '.join(READINGS[point])}")
            setattr(self, point, name)

    def non_default(self):
        return [f"{p}={getattr(self, p)}" for p, names in READINGS.items()
                if getattr(self, p) != names[0]]
