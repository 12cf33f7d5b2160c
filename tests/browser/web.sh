#!/bin/bash
# The web page in a real browser: playwright-core (tests/package.json)
# driving Debian's chromium against nginx + `runmyscript serve` on free
# loopback ports (web.mjs does the work and prints the TAP). Screenshots go
# to tests/browser/web.out/ in the build tree, for a person to look at.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib.sh"
MODULES=$top_srcdir/tests/node_modules
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
[ -d "$MODULES/playwright-core" ] ||
    skip_all "playwright-core is not installed in tests/ (./quickstart test runs npm ci there)"
[ -x "$CHROMIUM" ] || skip_all "chromium is not installed (./quickstart test installs it)"
NODE=$MODULES/.bin/node
[ -x "$NODE" ] || NODE=node
need "$NODE" unzip
TOKEN=browser-token
STACK_CONF="auth_token = $TOKEN\ncode_bytes = 64K"
stack_start serve || { ok 1 "the server starts"; done_testing; exit 1; }
HAVE_PILLOW=0
if [ -n "${WHEELHOUSE:-}" ] && ls "$WHEELHOUSE"/pillow-*.whl >/dev/null 2>&1; then
    HAVE_PILLOW=1
fi
OUT=${top_builddir:-.}/tests/browser/web.out
rm -rf "$OUT"
mkdir -p "$OUT"
BASE=$BASE TOKEN=$TOKEN OUT=$OUT CHROMIUM=$CHROMIUM STATE_DIR=$T/state HAVE_PILLOW=$HAVE_PILLOW \
    "$NODE" "$top_srcdir/tests/browser/web.mjs"
