#!/bin/bash
# The CSRF check of the routes that run code compares whole origins:
# scheme, host and port. A page of another port of an allowed host
# (http://localhost:3000, http://127.0.0.1:OTHER) cannot call /api/run or
# /mcp; the server's own origin (the page nginx serves) can, and so can an
# origin allowed_origins lists; the Host check (DNS rebinding) is apart.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib.sh"
STACK_CONF='allowed_origins = http://localhost:3001'
stack_start serve || { ok 1 "the server starts"; done_testing; exit 1; }
RUN='{"code":"print(\"csrf\")"}'
api() { # api ORIGIN: the status of a JSON /api/run posted with that Origin
    curl -sS -o "$T/b" -w '%{http_code}' -X POST -H 'Content-Type: application/json' -H "Origin: $1" \
        --data-binary "$RUN" "$BASE/api/run"
}
is "$(api http://localhost:3000)" 403 "/api/run from a page of http://localhost:3000: 403"
like "$(cat "$T/b")" "allowed_origins" "... saying which key would allow it"
[ ! -d "$T/state/runs" ] || [ -z "$(ls "$T/state/runs")" ]
ok $? "... and nothing ran"
is "$(api "http://127.0.0.1:$(free_port)")" 403 "/api/run from another port of the server's own host: 403"
is "$(api "https://127.0.0.1:$PORT")" 403 "/api/run from the same host and port over https: 403 (another scheme)"
is "$(api "http://127.0.0.1:$PORT")" 200 "/api/run from the server's own origin (its page): 200"
is "$(jb 'r["logs"]')" "csrf" "... and it ran"
is "$(api http://localhost:3001)" 200 "/api/run from an origin allowed_origins lists: 200"
is "$(api null)" 403 "/api/run from Origin: null (a sandboxed frame): 403"
STATUS=$(curl -sS -o "$T/b" -w '%{http_code}' -X POST -H 'Content-Type: application/json' --data-binary "$RUN" "$BASE/api/run")
is "$STATUS" 200 "/api/run without an Origin (not a browser): 200"

post '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"o","version":"1"}}}' \
    -H "$ACCEPT_BOTH" -H "Origin: http://localhost:3000"
is "$STATUS/$(jb 'r["error"]["code"]')" "403/-32000" "/mcp from a page of http://localhost:3000: 403 with a JSON-RPC error"
[ -z "$(ls "$T/state/sessions" 2>/dev/null | grep -E '^[0-9a-f]{32}$')" ]
ok $? "... and no session was made"
post '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"o","version":"1"}}}' \
    -H "$ACCEPT_BOTH" -H "Origin: http://127.0.0.1:$PORT"
is "$STATUS" 200 "/mcp from the server's own origin: 200"

# The DNS-rebinding check is the Host's, as before.
STATUS=$(curl -sS -o /dev/null -w '%{http_code}' -X POST -H 'Content-Type: application/json' -H 'Host: evil.example' \
    --data-binary "$RUN" "$BASE/api/run")
is "$STATUS" 403 "a Host not in allowed_hosts: 403"
# Artifacts and /healthz take no token and run nothing: the Origin's host name is enough there.
is "$(curl -sS -o /dev/null -w '%{http_code}' -H 'Origin: http://localhost:3000' "$BASE/healthz")" 200 \
    "/healthz from a page of another local port: 200 (it runs nothing)"
done_testing
