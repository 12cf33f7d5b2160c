#!/bin/bash
# The page's notebook mode in a real browser: playwright-core
# (tests/package.json) driving Debian's chromium against nginx +
# `runmyscript serve` (which has kernels) on free loopback ports
# (notebook.mjs does the work and prints the TAP). Screenshots go to
# tests/browser/notebook.out/ in the build tree, for a person to look at.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib.sh"
MODULES=$top_srcdir/tests/node_modules
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
[ -d "$MODULES/playwright-core" ] ||
    skip_all "playwright-core is not installed in tests/ (./quickstart test runs npm ci there)"
[ -x "$CHROMIUM" ] || skip_all "chromium is not installed (./quickstart test installs it)"
NODE=$MODULES/.bin/node
[ -x "$NODE" ] || NODE=node
need "$NODE"
TOKEN=notebook-token
STACK_CONF="auth_token = $TOKEN"
stack_start serve || { ok 1 "the server starts"; done_testing; exit 1; }
OUT=${top_builddir:-.}/tests/browser/notebook.out
rm -rf "$OUT"
mkdir -p "$OUT"
BASE=$BASE TOKEN=$TOKEN OUT=$OUT CHROMIUM=$CHROMIUM "$NODE" "$top_srcdir/tests/browser/notebook.mjs"
