#!/usr/bin/env python3
"""stream_hog.py: opens many MCP subscriptions/listen streams (2026-07-28,
following one task) through nginx at once, and holds them.

    stream_hog.py --port PORT --task TID --n N [--source 127.0.0.2] [--batch K]

Every stream is one connection, all opened together (non-blocking), so a
cap meets them as a burst. When each has its answer it prints one JSON line:
{"ok": streams acknowledged and open, "503": n, "429": n, "other": n,
 "retry_after": [the Retry-After values of the refusals], "seconds": time}
and holds the open ones, reading whatever comes, until its stdin closes
(or SIGTERM; with --until-term only that); then it prints a second line: {"closed": streams whose
response ended meanwhile (HTTP/1.0: the server closed the connection),
"ended": streams that got the subscription's result first, "keepalives":
keepalive comments seen} and exits.
Used by tests/e2e/streams.sh, tests/e2e/stream-caps.sh and bench/streams.
"""
import argparse
import json
import os
import resource
import selectors
import signal
import socket
import sys
import time


def request(port, tid, i):
    body = json.dumps({
        "jsonrpc": "2.0", "id": i, "method": "subscriptions/listen",
        "params": {"notifications": {"taskIds": [tid]}, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}}}})
    # HTTP/1.0: no chunks, and the connection closes with the response.
    head = (f"POST /mcp HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
            "Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n"
            f"Mcp-Method: subscriptions/listen\r\nContent-Length: {len(body)}\r\n\r\n")
    return (head + body).encode()


class Stream:
    def __init__(self, sock, req):
        self.sock, self.out, self.buf = sock, req, b""
        self.status, self.retry, self.acked, self.ended, self.closed, self.keepalives = None, None, False, False, False, 0

    def feed(self, data):
        self.buf += data
        if self.status is None and b"\r\n\r\n" in self.buf:
            head, _, rest = self.buf.partition(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            self.status = int(lines[0].split()[1])
            for l in lines[1:]:
                k, _, v = l.partition(":")
                if k.strip().lower() == "retry-after":
                    self.retry = v.strip()
            self.buf = rest
        if self.status == 200:
            if b"notifications/subscriptions/acknowledged" in self.buf:
                self.acked = True
            if b'"resultType"' in self.buf:
                self.ended = True
            self.keepalives += self.buf.count(b": keepalive")
            # Keep only a tail: a held stream must not grow the client.
            self.buf = self.buf[-256:] if len(self.buf) > 4096 else self.buf

    @property
    def answered(self):
        return self.closed or (self.status is not None and (self.status != 200 or self.acked))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--task", required=True)
    ap.add_argument("--n", type=int, required=True)
    ap.add_argument("--source", default="", help="the local address to connect from (127.0.0.X: another client)")
    ap.add_argument("--batch", type=int, default=0, help="open at most this many at a time (0: all at once)")
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--until-term", action="store_true", help="hold until SIGTERM (stdin is not read)")
    a = ap.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = a.n + 256
    if soft < want:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (max(want, soft), max(want, hard)))
        except (ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    sel = selectors.DefaultSelector()
    streams, pending, t0 = [], list(range(a.n)), time.monotonic()

    def start(i):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if a.source:
            s.bind((a.source, 0))
        s.setblocking(False)
        s.connect_ex(("127.0.0.1", a.port))
        st = Stream(s, request(a.port, a.task, i + 1))
        streams.append(st)
        sel.register(s, selectors.EVENT_WRITE | selectors.EVENT_READ, st)

    def pump(timeout):
        for key, ev in sel.select(timeout):
            st = key.data
            if ev & selectors.EVENT_WRITE and st.out:
                try:
                    n = st.sock.send(st.out)
                    st.out = st.out[n:]
                except BlockingIOError:
                    pass
                except OSError:
                    st.out, st.closed = b"", True
                if not st.out and not st.closed:
                    sel.modify(st.sock, selectors.EVENT_READ, st)
            if st.closed:
                sel.unregister(st.sock)
                st.sock.close()
            elif ev & selectors.EVENT_READ:
                pump_one(sel, st)

    while pending or not all(st.answered for st in streams):
        live = sum(1 for st in streams if not st.answered)
        while pending and (not a.batch or live < a.batch):
            start(pending.pop(0))
            live += 1
        pump(0.05)
        if time.monotonic() - t0 > a.timeout:
            break
    counts = {"ok": sum(1 for st in streams if st.status == 200 and st.acked and not st.closed),
              "503": sum(1 for st in streams if st.status == 503), "429": sum(1 for st in streams if st.status == 429)}
    counts["other"] = a.n - sum(counts.values())
    others = {}
    for st in streams:
        if not (st.status in (429, 503) or (st.status == 200 and st.acked and not st.closed)):
            k = str(st.status) if st.status else "closed" if st.closed else "no answer"
            others[k] = others.get(k, 0) + 1
    counts["others"] = others
    counts["retry_after"] = sorted({st.retry for st in streams if st.status in (429, 503)}, key=str)
    counts["seconds"] = round(time.monotonic() - t0, 3)
    print(json.dumps(counts), flush=True)
    # Hold until stdin closes (or SIGTERM).
    if not a.until_term:
        sel.register(sys.stdin, selectors.EVENT_READ, None)
    while not stop:
        for key, _ in sel.select(0.5):
            if key.data is None:
                if not os.read(sys.stdin.fileno(), 4096):
                    stop.append(1)
                continue
            pump_one(sel, key.data)
    held = [st for st in streams if st.status == 200 and st.acked]
    # What is already on its way (an end, a close) is still taken, for a moment.
    until = time.monotonic() + 2
    while time.monotonic() < until and not all(st.closed for st in held):
        for key, _ in sel.select(0.1):
            if key.data is not None:
                pump_one(sel, key.data)
    print(json.dumps({"closed": sum(1 for st in held if st.closed), "ended": sum(1 for st in held if st.ended),
                      "keepalives": sum(st.keepalives for st in held)}), flush=True)


def pump_one(sel, st):
    try:
        data = st.sock.recv(65536)
    except BlockingIOError:
        return
    except OSError:
        data = b""
    if data:
        st.feed(data)
    else:
        st.closed = True
        sel.unregister(st.sock)
        st.sock.close()


if __name__ == "__main__":
    main()
