"""Planted defects, each behind one named seam of `Policy`.

`Policy` holds the contract's behaviour at every point a defect can replace;
the service consults it and never asks which defect is planted.  A defect is
a set of overrides of those seams (`BUGS`), chosen with `--bug NAME`.  Each
defect names the contract sentence it breaks (section of the contract page,
English translation of 000_400c8c8bbb9bb1ae.txt, Chinese authoritative).
"""


class Policy:
    """The contract's behaviour at the seams."""

    # Retrying with a different card: "without exceeding the maximum number
    # of attempts (default 3)".
    max_attempts = 3
    # Idempotency rules: "Only one request obtains the right to execute".
    claim_key_atomically = True
    # Retention period: "uniqueness protection for merchant order numbers ...
    # remains in effect" after the 7-day key retention.
    order_index_expires_with_key = False
    # S10 / "429 rate_limited: this request was not executed".
    throttle_after_execute = False
    # S13 / "503 temporarily_unavailable ... this request was not accepted".
    maintenance_after_execute = False
    # "Requests rejected with 400, 401, 403 or 422 do not use up the key".
    rejection_binds_key = False
    # Retrying with a different card: "The new attempt keeps the original Payment".
    confirm_accepts_amount = False
    # "Confirming with a new key while the payment is still being processed
    # ... will be rejected (409 payment_in_progress)".
    confirm_rejects_in_progress = True
    # S7: "Reuses the original operation; does not charge using card B".
    replay_charges_new_card = False
    # "returns the object's latest status (HTTP 200)".
    replay_cached_response = False
    # (merchant, environment, merchant_refund_no) uniqueness.
    refund_no_unique = True
    # A refund never returns more than was captured.
    refund_over_captured = False
    # S12: "keeps the original status".
    cancel_202_reports_canceled = False
    # "when the two give conflicting results, the latest version prevails".
    bump_version_on_async_outcome = True

    def fingerprint(self, endpoint, params):
        """The safety-relevant parameters compared under one key."""
        return tuple(sorted(params.items()))

    def key_length(self, key):
        """Idempotency-Key, 1-255 characters."""
        return len(key)

    def scope(self, caller, method, path, key):
        """merchant + environment + method + path + idempotency key."""
        return (caller.merchant, caller.environment, method, path, key)

    def order_no_matches(self, stored, asked):
        """GET /v1/payments?merchant_order_no=... (exact match, case-sensitive)."""
        return stored == asked


def _fingerprint_without_currency(self, endpoint, params):
    return tuple(sorted((k, v) for k, v in params.items() if k != "currency"))


def _key_length_in_bytes(self, key):
    return len(key.encode("utf-8"))


def _scope_without_environment(self, caller, method, path, key):
    return (caller.merchant, method, path, key)


def _scope_with_api_key(self, caller, method, path, key):
    return (caller.merchant, caller.environment, caller.api_key, method, path, key)


def _order_no_casefold(self, stored, asked):
    return stored.casefold() == asked.casefold()


class Bug:
    def __init__(self, rule, what, **overrides):
        self.rule = rule
        self.what = what
        self.overrides = overrides


BUGS = {
    "conflict_ignores_currency": Bug(
        "Platform's idempotency rules: same key, safety-relevant parameters such as "
        "amount, currency or order number conflict -> HTTP 409 idempotency_conflict (S3)",
        "currency is left out of the compared parameters: a same-key create with "
        "another currency is answered 200 with the original Payment",
        fingerprint=_fingerprint_without_currency),
    "replay_returns_first_response": Bug(
        "Platform's idempotency rules: reuses the original business object ... returns "
        "the object's latest status (HTTP 200) (S1, S6)",
        "a replay answers the stored first response (its status code and body), "
        "not the object's latest state",
        replay_cached_response=True),
    "order_no_expires_with_key": Bug(
        "Retention period: after [7 days] uniqueness protection for merchant order "
        "numbers and refund numbers remains in effect",
        "the merchant_order_no index is pruned together with the expired key record: "
        "after 7 days a new key creates a second Payment for the order",
        order_index_expires_with_key=True),
    "throttle_executes": Bug(
        "429 and Retry-After: 429 rate_limited: this request was not executed (S10)",
        "the rate limiter runs after the handler: the request executes, then 429 is answered",
        throttle_after_execute=True),
    "maintenance_executes": Bug(
        "S13 / 429 and Retry-After: 503 temporarily_unavailable: this request was not "
        "accepted and no Payment was produced",
        "the maintenance switch is checked after the handler: the Payment is created "
        "(and charged), then 503 is answered",
        maintenance_after_execute=True),
    "confirm_accepts_amount": Bug(
        "Retrying with a different card: the new attempt keeps the original Payment "
        "and the fee rate of that time (S9)",
        "a confirm carrying `amount` changes the Payment's amount instead of "
        "being rejected",
        confirm_accepts_amount=True),
    "replay_charges_new_card": Bug(
        "S7 / 'Card information does not take part in the comparison ...: a replay "
        "with the same key will not charge using newly supplied card information'",
        "a same-key replay of a failed create that carries another card charges that card",
        replay_charges_new_card=True),
    "refund_no_reused": Bug(
        "Which requests need an idempotency key: create refund, uniqueness "
        "(merchant, environment, merchant_refund_no) remains in effect after the key expires",
        "a used merchant_refund_no under a new key creates a second refund",
        refund_no_unique=False),
    "refund_over_captured": Bug(
        "Why idempotency is needed: 'only one business effect' - a refund cannot "
        "give back more than the Payment captured (the contract's refund endpoint; "
        "not stated on this page)",
        "a refund whose amount exceeds the captured amount left is accepted",
        refund_over_captured=True),
    "cancel_202_reports_canceled": Bug(
        "S12: no evidence of a safe cancellation was obtained; keeps the original "
        "status and continues verifying",
        "a cancel the acquirer did not confirm is answered 202 with status canceled "
        "(while the charge may still succeed)",
        cancel_202_reports_canceled=True),
    "version_frozen_on_async_outcome": Bug(
        "Recommended query frequency: 'when the two give conflicting results, the "
        "latest version prevails' (a version must rise on every visible change)",
        "an outcome the acquirer reports late (slow cards, verification) changes the "
        "status without raising version",
        bump_version_on_async_outcome=False),
    "order_lookup_case_insensitive": Bug(
        "How to query when the result is unknown: GET /v1/payments?merchant_order_no=... "
        "(exact match, case-sensitive)",
        "the order-number query compares case-insensitively",
        order_no_matches=_order_no_casefold),
    "scope_ignores_environment": Bug(
        "Platform's idempotency rules: the same key in test and in production - the "
        "two do not affect each other",
        "the key scope leaves out the environment: a live create under a key used "
        "in test replays (or conflicts with) the test object",
        scope=_scope_without_environment),
    "rotation_changes_scope": Bug(
        "Platform's idempotency rules: rotating the API Key does not change the scope",
        "the key scope includes the API key: a retry under the rotated API key is "
        "treated as new business",
        scope=_scope_with_api_key),
    "concurrent_same_key_both_execute": Bug(
        "Platform's idempotency rules / S5: only one request obtains the right to "
        "execute; the other requests wait for it to complete and return the same object",
        "the key is recorded only after the upstream answered: a concurrent same-key "
        "request executes too instead of waiting (on create it then meets the order-number "
        "check: 409 order_no_conflict instead of 200 with the same object)",
        claim_key_atomically=False),
    "fourth_attempt": Bug(
        "Retrying with a different card: without exceeding the maximum number of "
        "attempts (default 3)",
        "the attempt limit is checked off by one: a 4th attempt is made",
        max_attempts=4),
    "rejection_binds_key": Bug(
        "'Requests rejected with 400, 401, 403 or 422 do not use up the idempotency key'",
        "a 422 (unsupported currency) binds the key: the corrected request under "
        "the same key is answered 409 idempotency_conflict",
        rejection_binds_key=True),
    "key_length_in_bytes": Bug(
        "Which requests need an idempotency key: Idempotency-Key, 1-255 characters",
        "the key length is counted in UTF-8 bytes: 200 two-byte characters are rejected",
        key_length=_key_length_in_bytes),
    "confirm_while_processing": Bug(
        "S8 / Retrying with a different card: confirming with a new key while the "
        "payment is processing or requires_action is rejected (409 payment_in_progress), "
        "no new charge",
        "a confirm under a new key while the Payment is unfinished starts a second attempt",
        confirm_rejects_in_progress=False),
}


def make_policy(names):
    """The policy with the named defects planted; an unknown name is a ValueError."""
    policy = Policy()
    for name in names:
        bug = BUGS.get(name)
        if bug is None:
            raise ValueError(f"unknown bug {name!r}; known: {', '.join(sorted(BUGS))}")
        for attr, value in bug.overrides.items():
            if callable(value):
                value = value.__get__(policy)
            setattr(policy, attr, value)
    return policy
