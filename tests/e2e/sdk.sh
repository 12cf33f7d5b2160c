#!/bin/bash
# The official TypeScript SDK client against runmyscript behind nginx
# (sdk-client.mjs does the work and prints the TAP).
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib.sh"
MODULES=$top_srcdir/tests/node_modules
[ -d "$MODULES/@modelcontextprotocol/sdk" ] ||
    skip_all "the npm packages are not installed in tests/ (./quickstart test runs npm ci there)"
NODE=$MODULES/.bin/node
[ -x "$NODE" ] || NODE=node
need "$NODE"
stack_start serve || { ok 1 "the server starts"; done_testing; exit 1; }
HAVE_PILLOW=0
if [ -n "${WHEELHOUSE:-}" ] && ls "$WHEELHOUSE"/pillow-*.whl >/dev/null 2>&1; then
    HAVE_PILLOW=1
fi
MCP_URL=$BASE/mcp STATE_DIR=$T/state TOP=$top_srcdir HAVE_PILLOW=$HAVE_PILLOW "$NODE" "$top_srcdir/tests/e2e/sdk-client.mjs"
