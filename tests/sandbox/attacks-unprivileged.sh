#!/bin/bash
# The attack suite again, with the program running as an unprivileged user.
RMS_ATTACK_AS=unprivileged . "${top_srcdir:?run me through make check, or set top_srcdir}/tests/sandbox/attacks.sh"
