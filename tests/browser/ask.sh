#!/bin/bash
# The page's input box in a real browser (ask.mjs: playwright-core driving
# Debian's chromium against nginx + `runmyscript serve`): a script's input()
# shows its prompt under the log, Enter answers it, "End input" closes its
# input, at 1280 and 390 px wide. Screenshots go to tests/browser/ask.out/.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/browser/lib.sh"
TOKEN=browser-token
STACK_CONF="auth_token = $TOKEN"
stack_start serve || { ok 1 "the server starts"; done_testing; exit 1; }
browser_out ask
BASE=$BASE TOKEN=$TOKEN OUT=$OUT CHROMIUM=$CHROMIUM "$NODE" "$top_srcdir/tests/browser/ask.mjs"
