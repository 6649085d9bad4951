"""Events (the webhook channel) and their optional delivery.

After every request and every clock move the service hands its objects to
`Events.observe`; an object whose rendering changed since it was last seen
produces one event, `<object>.<status>` when its status changed (for example
`payment.canceled`, `refund.succeeded`) and `<object>.updated` otherwise, with
the object as it now is (its `version` included).  The events are listed by
`GET /_admin/events`; with `--webhook-url` each is also POSTed there, in order,
by one background thread (3 tries, 1 s apart; a failed delivery is recorded).
"""
import copy
import json
import queue
import threading
import time
import urllib.request


class Events:
    def __init__(self, ids, clock, webhook_url=None):
        self.ids = ids
        self.clock = clock
        self.seen = {}
        self.log = []
        self.outbox = queue.Queue() if webhook_url else None
        if webhook_url:
            threading.Thread(target=self._deliver, args=(webhook_url,), daemon=True).start()

    def reset(self):
        self.seen = {}
        self.log = []

    def observe(self, objects):
        for obj in objects:
            now = obj.render()
            before = self.seen.get(obj.id)
            if before == now:
                continue
            self.seen[obj.id] = now
            kind = now["object"]
            if before is None or before["status"] != now["status"]:
                event_type = f"{kind}.{now['status']}"
            else:
                event_type = f"{kind}.updated"
            event = {"id": self.ids.new("evt"), "object": "event", "type": event_type,
                     "created": int(self.clock.now()), "data": {"object": copy.deepcopy(now)},
                     "delivery": None}
            self.log.append(event)
            if self.outbox is not None:
                self.outbox.put(event)

    def _deliver(self, url):
        while True:
            event = self.outbox.get()
            body = {k: v for k, v in event.items() if k != "delivery"}
            data = json.dumps(body).encode()
            outcome = "failed"
            for _ in range(3):
                try:
                    req = urllib.request.Request(url, data=data, method="POST",
                                                 headers={"Content-Type": "application/json",
                                                          "PayHub-Event-Id": event["id"]})
                    with urllib.request.urlopen(req, timeout=5) as resp:
                        if 200 <= resp.status < 300:
                            outcome = "delivered"
                            break
                except Exception:
                    pass
                time.sleep(1)
            event["delivery"] = outcome
