#!/usr/bin/env python3
"""slow_reader.py PORT SID REV KB SLEEP GO: a tools/call of run_code that
prints KB KiB (lines of 4000 bytes, the longest a notification carries
whole), then sleeps SLEEP s, asked for as events (REV: 2025-11-25 in the
session SID, or 2026-07-28 without one) from a client with a 4 KiB receive
buffer that reads nothing until the file GO exists. Prints "sent" once the
request is out, then what it got: {"bytes": N, "complete": whether the
call's answer was among it}. For tests/lib/streams.sh's slow_start."""
import json, os, socket, sys, time
port, sid, rev, kb, sleep = int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4]), float(sys.argv[5])
# KB KiB printed in lines of 4000 bytes (the longest a notification carries whole).
code = f"import time\nline = 'x' * 3999\nfor i in range({kb} // 4):\n    print(line)\ntime.sleep({sleep})\n"
if rev == "2026-07-28":
    body = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "run_code", "arguments": {"code": code},
            "_meta": {"io.modelcontextprotocol/protocolVersion": rev, "io.modelcontextprotocol/clientCapabilities": {},
                      "io.modelcontextprotocol/logLevel": "info"}}}
    extra = "Mcp-Method: tools/call\r\nMcp-Name: run_code\r\n"
else:
    body = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "run_code", "arguments": {"code": code}}}
    extra = f"Mcp-Session-Id: {sid}\r\n"
body = json.dumps(body)
req = (f"POST /mcp HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
       f"Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: {rev}\r\n{extra}"
       f"Content-Length: {len(body)}\r\n\r\n{body}").encode()
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # a client that reads slowly, or not at all
s.connect(("127.0.0.1", port))
s.sendall(req)
print("sent", flush=True)
while not os.path.exists(sys.argv[6]):  # reads only when told
    time.sleep(0.1)
data = b""
s.settimeout(30)
try:
    while True:
        d = s.recv(1 << 20)
        if not d:
            break
        data += d
except OSError:
    pass
def answer(line):
    try:
        m = json.loads(line[5:])
    except ValueError:
        return False
    return m.get("id") == 7 and ("result" in m or "error" in m)
complete = any(answer(l) for l in data.split(b"\n") if l.startswith(b"data:"))
print(json.dumps({"bytes": len(data), "complete": complete}), flush=True)
