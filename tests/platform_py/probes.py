"""One probe per planted defect: requests whose answer differs between the clean
platform and the platform with the defect (see bugs.py)."""
from rig import DAY, concurrently, fresh, utf8_as_header


def _refund(p, pid, no, amount, key):
    return p.call("POST", "/v1/refunds", {"payment_id": pid, "amount": amount,
                                           "merchant_refund_no": no}, key=key)


def probe_conflict_ignores_currency(p):
    k, o = fresh("K"), fresh("O")
    p.create(k, o)
    return p.create(k, o, currency="EUR")[0]


def probe_replay_returns_first_response(p):
    k, o = fresh("K"), fresh("O")
    p.create(k, o, card="tok_approve_slow")
    p.advance(21)
    s, b, _ = p.create(k, o, card="tok_approve_slow")
    return s, b["status"]


def probe_order_no_expires_with_key(p):
    o = fresh("O")
    p.create(fresh("K"), o)
    p.advance(8 * DAY)
    return p.create(fresh("K"), o)[0], len(p.by_order(o))


def probe_throttle_executes(p):
    k, o = fresh("K"), fresh("O")
    p.admin("PUT", "/_admin/merchants/m1/throttle", {"enabled": True})
    first = p.create(k, o)[0]
    p.admin("PUT", "/_admin/merchants/m1/throttle", {"enabled": False})
    return first, p.create(k, o)[0]


def probe_maintenance_executes(p):
    k, o = fresh("K"), fresh("O")
    p.admin("POST", "/_admin/maintenance", {"on": True})
    first = p.create(k, o)[0]
    p.admin("POST", "/_admin/maintenance", {"on": False})
    return first, len(p.by_order(o)), len(p.authorizations())


def probe_confirm_accepts_amount(p):
    pay = p.create(fresh("K"), fresh("O"), card="tok_decline")[1]
    s = p.confirm(pay["id"], fresh("K"), amount=1)[0]
    return s, p.get(f"/v1/payments/{pay['id']}")[1]["amount"]


def probe_replay_charges_new_card(p):
    k, o = fresh("K"), fresh("O")
    p.create(k, o, card="tok_decline")
    return p.create(k, o, card="tok_approve")[1]["status"], len(p.authorizations())


def probe_refund_no_reused(p):
    pay = p.create(fresh("K"), fresh("O"))[1]
    r = fresh("R")
    _refund(p, pay["id"], r, 100, fresh("K"))
    s = _refund(p, pay["id"], r, 100, fresh("K"))[0]
    return s, len(p.get(f"/v1/refunds?merchant_refund_no={r}")[1]["data"])


def probe_refund_over_captured(p):
    pay = p.create(fresh("K"), fresh("O"), amount=10000)[1]
    return _refund(p, pay["id"], fresh("R"), 15000, fresh("K"))[0]


def probe_cancel_202_reports_canceled(p):
    pay = p.create(fresh("K"), fresh("O"), card="tok_3ds_cancel_race")[1]
    s, b, _ = p.cancel(pay["id"], fresh("K"))
    p.advance(31)
    return s, b["status"], p.get(f"/v1/payments/{pay['id']}")[1]["status"]


def probe_version_frozen_on_async_outcome(p):
    pay = p.create(fresh("K"), fresh("O"), card="tok_approve_slow")[1]
    p.advance(21)
    after = p.get(f"/v1/payments/{pay['id']}")[1]
    return after["status"], after["version"] > pay["version"]


def probe_order_lookup_case_insensitive(p):
    o = fresh("Order-Mixed")
    p.create(fresh("K"), o)
    return len(p.by_order(o.lower()))


def probe_scope_ignores_environment(p):
    k, o = fresh("K"), fresh("O")
    test = p.create(k, o)[1]
    s, b, _ = p.create(k, o, api_key="sk_live_m1_1")
    return s, b.get("id") == test["id"]


def probe_rotation_changes_scope(p):
    k, o = fresh("K"), fresh("O")
    p.create(k, o)
    return p.create(k, o, api_key="sk_test_m1_2")[0]


def probe_concurrent_same_key_both_execute(p):
    k, o = fresh("K"), fresh("O")
    results = concurrently(lambda: p.create(k, o), lambda: p.create(k, o))
    return sorted(r[0] for r in results), len(p.authorizations())


def probe_fourth_attempt(p):
    pay = p.create(fresh("K"), fresh("O"), card="tok_decline")[1]
    p.confirm(pay["id"], fresh("K"), card="tok_decline")
    p.confirm(pay["id"], fresh("K"), card="tok_decline")
    return p.confirm(pay["id"], fresh("K"))[0]


def probe_rejection_binds_key(p):
    k, o = fresh("K"), fresh("O")
    p.create(k, o, currency="XYZ")
    return p.create(k, o)[0]


def probe_key_length_in_bytes(p):
    return p.create(utf8_as_header("é" * 200), fresh("O"))[0]


def probe_confirm_while_processing(p):
    pay = p.create(fresh("K"), fresh("O"), card="tok_approve_slow")[1]
    return p.confirm(pay["id"], fresh("K"))[0], len(p.authorizations())


# name -> (probe, answer on the clean platform, answer with the defect)
DEFECTS = {
    "conflict_ignores_currency": (probe_conflict_ignores_currency, 409, 200),
    "replay_returns_first_response": (probe_replay_returns_first_response,
                                      (200, "succeeded"), (202, "processing")),
    "order_no_expires_with_key": (probe_order_no_expires_with_key, (409, 1), (201, 2)),
    "throttle_executes": (probe_throttle_executes, (429, 201), (429, 200)),
    "maintenance_executes": (probe_maintenance_executes, (503, 0, 0), (503, 1, 1)),
    "confirm_accepts_amount": (probe_confirm_accepts_amount, (400, 10000), (200, 1)),
    "replay_charges_new_card": (probe_replay_charges_new_card, ("failed", 1), ("succeeded", 2)),
    "refund_no_reused": (probe_refund_no_reused, (409, 1), (201, 2)),
    "refund_over_captured": (probe_refund_over_captured, 422, 201),
    "cancel_202_reports_canceled": (probe_cancel_202_reports_canceled,
                                    (202, "requires_action", "succeeded"),
                                    (202, "canceled", "succeeded")),
    "version_frozen_on_async_outcome": (probe_version_frozen_on_async_outcome,
                                        ("succeeded", True), ("succeeded", False)),
    "order_lookup_case_insensitive": (probe_order_lookup_case_insensitive, 0, 1),
    "scope_ignores_environment": (probe_scope_ignores_environment, (201, False), (200, True)),
    "rotation_changes_scope": (probe_rotation_changes_scope, 200, 409),
    "concurrent_same_key_both_execute": (probe_concurrent_same_key_both_execute,
                                         ([200, 201], 1), ([201, 409], 1)),
    "fourth_attempt": (probe_fourth_attempt, 409, 200),
    "rejection_binds_key": (probe_rejection_binds_key, 201, 409),
    "key_length_in_bytes": (probe_key_length_in_bytes, 201, 400),
    "confirm_while_processing": (probe_confirm_while_processing, (409, 1), (200, 2)),
}
