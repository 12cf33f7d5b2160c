#!/bin/bash
# The attack suite again with script_network = on, the program run by an
# unprivileged user.
RMS_ATTACK_NETWORK=on RMS_ATTACK_AS=unprivileged . "${top_srcdir:?run me through make check, or set top_srcdir}/tests/sandbox/attacks.sh"
