"""Idempotency records: one per scope (merchant, environment, method, path, key).

A record is claimed `running` before a request executes and becomes `done`
when the execution is bound to its object (or, for a rejection the policy
binds, to that rejection).  A request that meets a running record waits on
the platform's condition; a rejection that does not execute anything is
released, so the key stays free.  Records are kept 7 days on the platform
clock (RETENTION); the business uniqueness indexes live elsewhere and outlive
them.
"""

RETENTION = 7 * 24 * 3600

RUNNING = "running"
DONE = "done"


class Record:
    def __init__(self, scope, fingerprint, created):
        self.scope = scope
        self.fingerprint = fingerprint
        self.created = created
        self.state = RUNNING
        self.kind = None            # "payment" | "refund" | "session" | "rejection"
        self.object_id = None
        self.first_status = None
        self.first_body = None


class Keys:
    def __init__(self):
        self.records = {}

    def find(self, scope):
        return self.records.get(scope)

    def claim(self, scope, fingerprint, now, register=True):
        record = Record(scope, fingerprint, now)
        if register:
            self.records[scope] = record
        return record

    def bind(self, record, kind, object_id, status, body):
        record.state = DONE
        record.kind = kind
        record.object_id = object_id
        record.first_status = status
        record.first_body = body
        self.records[record.scope] = record

    def release(self, record):
        if self.records.get(record.scope) is record:
            del self.records[record.scope]
        record.state = DONE

    def expire(self, now):
        """Drop the records past retention; return them (done ones only)."""
        gone = [r for r in self.records.values()
                if r.state == DONE and now - r.created >= RETENTION]
        for r in gone:
            del self.records[r.scope]
        return gone

    def clear(self):
        self.records = {}
