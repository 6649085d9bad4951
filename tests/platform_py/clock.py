"""The platform's clock.

The simulated clock starts at a fixed epoch and moves only when the
`POST /_admin/clock/advance` control moves it; every deadline of the platform
(idempotency retention, payment and session expiry, the acquirer's late
answers, refund settlement) is measured on it.  `--real-clock` swaps in the
wall clock instead (the control is then refused).
"""
import time
from datetime import datetime, timezone

# 2026-11-02T00:00:00Z: the simulated clock's epoch.
EPOCH = 1793577600.0


class SimClock:
    simulated = True

    def __init__(self):
        self._now = EPOCH

    def now(self):
        return self._now

    def advance(self, seconds):
        self._now += seconds

    def reset(self):
        self._now = EPOCH


class RealClock:
    simulated = False

    def now(self):
        return time.time()

    def advance(self, seconds):
        raise ValueError("the platform runs on the real clock")

    def reset(self):
        pass


def iso(ts):
    """An instant as RFC 3339 UTC with whole seconds."""
    if ts is None:
        return None
    return datetime.fromtimestamp(int(ts), tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
