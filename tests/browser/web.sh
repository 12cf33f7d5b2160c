#!/bin/bash
# The web page in a real browser: playwright-core (tests/package.json)
# driving Debian's chromium against nginx + `runmyscript serve` on free
# loopback ports (web.mjs does the work and prints the TAP). Screenshots go
# to tests/browser/web.out/ in the build tree, for a person to look at.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/browser/lib.sh"
need unzip
TOKEN=browser-token
STACK_CONF="auth_token = $TOKEN\ncode_bytes = 64K"
stack_start serve || { ok 1 "the server starts"; done_testing; exit 1; }
HAVE_PILLOW=0
if [ -n "${WHEELHOUSE:-}" ] && ls "$WHEELHOUSE"/pillow-*.whl >/dev/null 2>&1; then
    HAVE_PILLOW=1
fi
browser_out web
BASE=$BASE TOKEN=$TOKEN OUT=$OUT CHROMIUM=$CHROMIUM STATE_DIR=$T/state HAVE_PILLOW=$HAVE_PILLOW \
    "$NODE" "$top_srcdir/tests/browser/web.mjs"
