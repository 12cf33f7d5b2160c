#!/bin/bash
# The attack suite's cells again with the server, the kernels and the
# driver an unprivileged user's.
RMS_ATTACK_CELL=1 RMS_ATTACK_AS=unprivileged . "${top_srcdir:?run me through make check, or set top_srcdir}/tests/sandbox/attacks.sh"
