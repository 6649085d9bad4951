"""HAR 1.2 recording of every exchange.

The whole file is rewritten after each exchange (to a temporary file, then
renamed over the target), so it is valid JSON whenever it is read.
"""
import json
import threading
from datetime import datetime, timezone

CREATOR = {"name": "pyplat", "version": "1.0"}


def started(ts):
    return datetime.fromtimestamp(ts, tz=timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _headers(pairs):
    return [{"name": k, "value": v} for k, v in pairs]


def entry(started_ts, elapsed_ms, method, url, req_headers, req_body, status, reason,
          resp_headers, resp_body, query=(), error=None):
    request = {
        "method": method, "url": url, "httpVersion": "HTTP/1.1",
        "cookies": [], "headers": _headers(req_headers),
        "queryString": [{"name": k, "value": v} for k, v in query],
        "headersSize": -1, "bodySize": len(req_body.encode("utf-8")) if req_body else 0,
    }
    if req_body:
        ctype = next((v for k, v in req_headers if k.lower() == "content-type"), "application/json")
        request["postData"] = {"mimeType": ctype, "text": req_body}
    response = {
        "status": status, "statusText": reason, "httpVersion": "HTTP/1.1",
        "cookies": [], "headers": _headers(resp_headers),
        "content": {"size": len(resp_body.encode("utf-8")), "mimeType": "application/json",
                    "text": resp_body},
        "redirectURL": "", "headersSize": -1, "bodySize": len(resp_body.encode("utf-8")),
    }
    e = {"startedDateTime": started(started_ts), "time": round(elapsed_ms, 3),
         "request": request, "response": response, "cache": {},
         "timings": {"send": 0, "wait": round(elapsed_ms, 3), "receive": 0}}
    if error:
        e["_error"] = error
    return e


class HarWriter:
    """Appends entries in start order; the file is complete JSON after every `add`.

    The closing `]}}` is overwritten by each new entry and written again after
    it.  An entry that started before entries already written (concurrent
    exchanges finish out of order) is put in its place by rewriting the last
    few entries (at most TAIL of them are kept in memory for that).
    """
    TAIL = 64
    SUFFIX = b"\n]}}\n"

    def __init__(self, path):
        self.lock = threading.Lock()
        self.file = open(path, "w+b")
        head = {"log": {"version": "1.2", "creator": CREATOR, "pages": [], "entries": []}}
        text = json.dumps(head, ensure_ascii=False)
        header = text[:text.rindex("[") + 1].encode("utf-8") + b"\n"
        self.body_start = len(header)
        self.end = self.body_start
        self.tail = []      # (startedDateTime, offset, entry) of the last entries written
        self.file.write(header + self.SUFFIX)
        self.file.flush()

    def add(self, e):
        key = e["startedDateTime"]
        with self.lock:
            i = len(self.tail)
            while i > 0 and self.tail[i - 1][0] > key:
                i -= 1
            self._rewrite(i, [(key, e)])

    def update(self, e):
        """Write an entry already added again (it changed); ignored once it left the tail."""
        with self.lock:
            for i, (_, _, entry) in enumerate(self.tail):
                if entry is e:
                    self._rewrite(i, [])
                    return

    def _rewrite(self, i, new):
        pending = new + [(k, entry) for k, _, entry in self.tail[i:]]
        offset = self.tail[i][1] if i < len(self.tail) else self.end
        del self.tail[i:]
        self.file.seek(offset)
        self.file.truncate()
        for k, entry in pending:
            sep = b",\n" if offset > self.body_start else b""
            data = sep + json.dumps(entry, ensure_ascii=False).encode("utf-8")
            self.file.write(data)
            self.tail.append((k, offset, entry))
            offset += len(data)
        self.end = offset
        self.file.write(self.SUFFIX)
        self.file.flush()
        del self.tail[:-self.TAIL]
