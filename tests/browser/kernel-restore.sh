#!/bin/bash
# The page's notebook with a restored kernel in a real browser:
# playwright-core driving Debian's chromium (kernel-restore.mjs) against
# nginx + `runmyscript serve` with kernel_idle = 3s, so that a notebook's
# kernel is saved and stopped between two cells, and the next cell restores
# it: its status, its Why and the kernel line (the names back, the one not)
# at 1280 and 390 px. Prints TAP, merged here. Screenshots go to
# tests/browser/kernel-restore.out/ in the build tree, for a person to look at.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/browser/lib.sh"
TOKEN=restore-token
STACK_CONF="auth_token = $TOKEN\nkernel_idle = 3s"
stack_start serve || { ok 1 "the server starts"; done_testing; exit 1; }
browser_out kernel-restore
BASE=$BASE TOKEN=$TOKEN OUT=$OUT CHROMIUM=$CHROMIUM "$NODE" "$top_srcdir/tests/browser/kernel-restore.mjs" >"$T/restore.tap"
rc=$?
tap_merge "" "$T/restore.tap"
[ "$rc" = 0 ] || ok 1 "kernel-restore.mjs ended with status $rc"
done_testing
