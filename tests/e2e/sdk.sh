#!/bin/bash
# The official TypeScript SDK client against runmyscript behind nginx
# (sdk-client.mjs does the work and prints the TAP).
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib.sh"
need_sdk
stack_start serve || { ok 1 "the server starts"; done_testing; exit 1; }
have_pillow
MCP_URL=$BASE/mcp STATE_DIR=$T/state TOP=$top_srcdir HAVE_PILLOW=$HAVE_PILLOW "$NODE" "$top_srcdir/tests/e2e/sdk-client.mjs"
