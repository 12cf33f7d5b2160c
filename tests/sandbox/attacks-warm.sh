#!/bin/bash
# The attack suite again with every run started warm: forked from a zygote
# of a running server's pool (tests/lib/warm.sh), each result checked to
# say "start": "warm".
RMS_ATTACK_WARM=1 . "${top_srcdir:?run me through make check, or set top_srcdir}/tests/sandbox/attacks.sh"
