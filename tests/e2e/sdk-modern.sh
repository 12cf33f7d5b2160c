#!/bin/bash
# The official clients against runmyscript behind nginx in every way they
# reach it: the v2 client pinned to 2026-07-28, in 'auto' negotiation and in
# its default legacy mode, and the v1 client (sdk-modern.mjs does the work
# and prints the TAP). task_after is short, so that a long run becomes a task.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib.sh"
MODULES=$top_srcdir/tests/node_modules
[ -d "$MODULES/@modelcontextprotocol/client" ] && [ -d "$MODULES/@modelcontextprotocol/sdk" ] ||
    skip_all "the npm packages are not installed in tests/ (./quickstart test runs npm ci there)"
NODE=$MODULES/.bin/node
[ -x "$NODE" ] || NODE=node
need "$NODE"
TASK_AFTER_MS=1500
STACK_CONF="task_after = ${TASK_AFTER_MS}ms"
stack_start serve || { ok 1 "the server starts"; done_testing; exit 1; }
# A cancelled run's result.json (status cancelled) is written only once its
# jail, and every process in it, is gone: sdk-modern.mjs waits for it.
MCP_URL=$BASE/mcp STATE_DIR=$T/state TOP=$top_srcdir TASK_AFTER_MS=$TASK_AFTER_MS \
    "$NODE" "$top_srcdir/tests/e2e/sdk-modern.mjs"
