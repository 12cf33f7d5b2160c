#!/bin/bash
# The page's notebook mode in a real browser: playwright-core
# (tests/package.json) driving Debian's chromium against nginx +
# `runmyscript serve` (which has kernels) on free loopback ports
# (notebook.mjs does the work and prints the TAP). Screenshots go to
# tests/browser/notebook.out/ in the build tree, for a person to look at.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/browser/lib.sh"
TOKEN=notebook-token
STACK_CONF="auth_token = $TOKEN"
stack_start serve || { ok 1 "the server starts"; done_testing; exit 1; }
browser_out notebook
BASE=$BASE TOKEN=$TOKEN OUT=$OUT CHROMIUM=$CHROMIUM "$NODE" "$top_srcdir/tests/browser/notebook.mjs"
