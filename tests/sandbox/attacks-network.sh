#!/bin/bash
# The attack suite again with script_network = on (tests/sandbox/attacks.sh,
# "The network passes").
RMS_ATTACK_NETWORK=on . "${top_srcdir:?run me through make check, or set top_srcdir}/tests/sandbox/attacks.sh"
