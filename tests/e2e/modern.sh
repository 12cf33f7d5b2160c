#!/bin/bash
# The 2026-07-28 revision over raw HTTP through nginx, beside a legacy
# session on the same server: every transport rule (lib.sh's modern_cases),
# the workspace handles, tasks; cgi.sh and apache.sh run the same cases.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib.sh"
STACK_CONF="task_after = 1s"
stack_start serve || { ok 1 "the server starts"; done_testing; exit 1; }
modern_cases serve
done_testing
